#include "logging/journal_sink.h"

#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include <string>
#include <vector>

namespace sandboxd {
namespace {

thread_local const LogSubject* current_subject = nullptr;

int SyslogPriority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return LOG_CRIT;
    case spdlog::level::err: return LOG_ERR;
    case spdlog::level::warn: return LOG_WARNING;
    case spdlog::level::info: return LOG_INFO;
    default: return LOG_DEBUG;
  }
}

}  // namespace

ScopedLogSubject::ScopedLogSubject(const LogSubject& subject) : previous_(current_subject) { current_subject = &subject; }

ScopedLogSubject::~ScopedLogSubject() { current_subject = previous_; }

const LogSubject* CurrentLogSubject() { return current_subject; }

void JournalSink::sink_it_(const spdlog::details::log_msg& message) {
  std::vector<std::string> fields;
  fields.push_back("MESSAGE=" + std::string(message.payload.data(), message.payload.size()));
  fields.push_back("PRIORITY=" + std::to_string(SyslogPriority(message.level)));
  fields.push_back("SYSLOG_IDENTIFIER=sandboxd");
  if (const LogSubject* subject = current_subject) {
    if (!subject->sandbox_id.empty()) fields.push_back("SANDBOX_ID=" + subject->sandbox_id);
    if (subject->owner) fields.push_back("SANDBOX_OWNER_UID=" + std::to_string(*subject->owner));
    if (!subject->job_id.empty()) fields.push_back("JOB_ID=" + subject->job_id);
  }
  std::vector<iovec> vector;
  for (auto& field : fields) vector.push_back({field.data(), field.size()});
  sd_journal_sendv(vector.data(), static_cast<int>(vector.size()));
}

}  // namespace sandboxd
