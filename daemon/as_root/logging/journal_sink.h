#pragma once
/// An spdlog sink writing to the systemd journal with structured fields: MESSAGE, PRIORITY and
/// SYSLOG_IDENTIFIER as spdlog's own systemd sink writes them, plus the subject of the line
/// (log.h's LogSubject) when there is one. spdlog 1.10's sink has no way to add fields.

#include <spdlog/sinks/base_sink.h>

#include <mutex>

#include "logging/log.h"

namespace sandboxd {

/// The subject set on this thread by ScopedLogSubject, or nullptr.
const LogSubject* CurrentLogSubject();

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& message) override;
  void flush_() override {}
};

}  // namespace sandboxd
