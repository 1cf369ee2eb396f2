#include "logging/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "base/errors.h"
#include "logging/journal_sink.h"

namespace sandboxd {

void SetUpLogging(const std::string& level) {
  auto parsed = spdlog::level::from_str(level == "warning" ? "warn" : level);
  if (parsed == spdlog::level::off && level != "off")
    throw Error(Code::kInvalidArgument, "unknown log level '" + level + "'");
  std::shared_ptr<spdlog::logger> logger;
  if (std::getenv("JOURNAL_STREAM") != nullptr) {
    logger = std::make_shared<spdlog::logger>("sandboxd", std::make_shared<JournalSink>());
  } else {
    logger = spdlog::stderr_color_mt("sandboxd");
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e sandboxd[%P] %^%l%$: %v");
  }
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace sandboxd
