// tinker::local::Server: one io_context run by one thread holds the HTTP front end and the
// engine's state; public calls from other threads hop onto it.
#include "programs/local/server/connection.hpp"
#include "programs/local/server/frontend.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <tinker/error.hpp>
#include <tinker/local/server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <condition_variable>
#include <csignal>
#include <future>
#include <mutex>
#include <thread>

namespace tinker::local {
namespace asio = boost::asio;

namespace {

std::filesystem::path make_temporary_data_dir() {
  std::array<unsigned char, 8> random{};
  RAND_bytes(random.data(), static_cast<int>(random.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "tinker-local-";
  for (unsigned char byte : random) {
    name += kHex[byte >> 4];
    name += kHex[byte & 0xf];
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::create_directories(dir);
  return dir;
}

void validate(const ServerOptions& options) {
  auto invalid = [](const std::string& message) { throw error(errc::invalid_configuration, message); };
  if (options.worker_threads < 1) invalid("worker_threads must be at least 1");
  if (options.training_delay.count() < 0) {
    invalid("training_delay must not be negative, got " + std::to_string(options.training_delay.count()) + " ms");
  }
  if (options.sampling_delay.count() < 0) {
    invalid("sampling_delay must not be negative, got " + std::to_string(options.sampling_delay.count()) + " ms");
  }
  if (options.max_request_body == 0) invalid("max_request_body must be positive");
  if (options.catalogue.empty()) invalid("catalogue must name at least one base model");
  if (!options.path_prefix.empty() && (options.path_prefix.front() != '/' || options.path_prefix.back() == '/')) {
    invalid("path_prefix must start with '/' and not end with '/', got \"" + options.path_prefix + "\"");
  }
  if (options.idle_timeout.count() <= 0) invalid("idle_timeout must be positive");
  if (options.header_timeout.count() <= 0) invalid("header_timeout must be positive");
  if (options.max_header_bytes < 1024) invalid("max_header_bytes must be at least 1024");
  for (const auto& [name, id] :
       {std::pair<const char*, const std::string&>("bpe_tokenizer_id", options.bpe_tokenizer_id),
        std::pair<const char*, const std::string&>("sp_tokenizer_id", options.sp_tokenizer_id),
        std::pair<const char*, const std::string&>("vl_tokenizer_id", options.vl_tokenizer_id)}) {
    const bool id_ok =
        std::count(id.begin(), id.end(), '/') == 1 && id.front() != '/' && id.back() != '/' &&
        id.find("..") == std::string::npos && std::all_of(id.begin(), id.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-';
        });
    if (!id_ok) {
      invalid(std::string(name) + " must be \"org/name\" of letters, digits, '.', '_', '-', got \"" + id + "\"");
    }
  }
  if (options.bpe_tokenizer_id == options.sp_tokenizer_id) {
    invalid("bpe_tokenizer_id and sp_tokenizer_id must differ, both are \"" + options.bpe_tokenizer_id + "\"");
  }
  if (options.vl_tokenizer_id == options.bpe_tokenizer_id || options.vl_tokenizer_id == options.sp_tokenizer_id) {
    invalid("vl_tokenizer_id must differ from bpe_tokenizer_id and sp_tokenizer_id, got \"" + options.vl_tokenizer_id +
            "\"");
  }
}

const CatalogueEntry& catalogue_entry(const ServerOptions& options, std::string_view base_model) {
  for (const CatalogueEntry& entry : options.catalogue) {
    if (entry.name == base_model) return entry;
  }
  throw error(errc::invalid_argument, "the catalogue has no base model \"" + std::string(base_model) + "\"");
}

}  // namespace

class Server::Impl {
 public:
  explicit Impl(ServerOptions options_) : options(std::move(options_)) {}
  ~Impl() {
    stop();
    http.reset();
    frontend.reset();
    if (owns_data_dir) {
      std::error_code ignored;
      std::filesystem::remove_all(data_dir, ignored);
    }
  }

  void start();
  void stop();
  void wait_for_shutdown_signal();

  /// Runs `call` on the io thread (directly when not running or already on it) and returns its result.
  template <class Call>
  auto on_io(Call call) -> decltype(call()) {
    std::unique_lock lock(mutex);
    if (!running || io.get_executor().running_in_this_thread()) {
      lock.unlock();
      return call();
    }
    std::packaged_task<decltype(call())()> task(std::move(call));
    auto result = task.get_future();
    // Posted under the lock, so it runs before stop()'s shutdown handler.
    asio::post(io, [&task] { task(); });
    lock.unlock();
    return result.get();
  }

  ServerOptions options;
  asio::io_context io{1};
  std::filesystem::path data_dir;
  bool owns_data_dir = false;
  LocalTokenizers tokenizers;
  std::unique_ptr<front::Frontend> frontend;
  std::unique_ptr<front::HttpServer> http;
  std::optional<asio::signal_set> signals;
  std::thread thread;
  std::uint16_t port = 0;
  std::string base_url;

  std::mutex mutex;
  std::condition_variable changed;
  bool started = false;
  bool running = false;
  bool stopped = false;
  bool signalled = false;
};

void Server::Impl::start() {
  {
    std::lock_guard lock(mutex);
    if (started) throw error(errc::invalid_configuration, "the server was already started");
    started = true;
  }
  validate(options);
  if (options.data_dir.empty()) {
    data_dir = make_temporary_data_dir();
    owns_data_dir = true;
  } else {
    data_dir = options.data_dir;
    std::error_code ec;
    std::filesystem::create_directories(data_dir, ec);
    if (ec) throw error(errc::invalid_configuration, "data_dir " + data_dir.string() + ": " + ec.message());
  }
  options.data_dir = data_dir;
  const std::filesystem::path hub = options.hf_hub_cache.empty() ? default_hf_hub_cache() : options.hf_hub_cache;
  tokenizers = ensure_catalogue_tokenizers(hub, options);

  frontend = std::make_unique<front::Frontend>(io, options, tokenizers);
  for (const TinyTokenizer kind : all_tiny_tokenizers) {
    for (const std::string& repo : tokenizer_repos(options, kind)) {
      frontend->hub_repos.emplace(repo, read_installed_repo(hub, repo));
    }
  }
  http = std::make_unique<front::HttpServer>(io, *frontend);
  try {
    port = http->listen(options.host, options.port);
  } catch (...) {
    http.reset();
    frontend->engine.shutdown();
    frontend.reset();
    throw;
  }
  const bool ipv6 = options.host.find(':') != std::string::npos;
  base_url =
      "http://" + (ipv6 ? "[" + options.host + "]" : options.host) + ":" + std::to_string(port) + options.path_prefix;
  frontend->base_url = base_url;
  frontend->logger.info("serving " + base_url + " (data dir " + data_dir.string() + ", " +
                        (options.null_model ? "null model" : std::to_string(options.worker_threads) + " worker(s)") +
                        ")");
  http->start();
  {
    std::lock_guard lock(mutex);
    running = true;
  }
  thread = std::thread([this] {
    for (;;) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        frontend->logger.error(std::string("unexpected exception on the io thread: ") + e.what());
      }
    }
  });
}

void Server::Impl::stop() {
  if (io.get_executor().running_in_this_thread()) {
    throw error(errc::invalid_configuration, "Server::stop() cannot be called from the server's own thread");
  }
  {
    std::lock_guard lock(mutex);
    if (!running || stopped) return;
    stopped = true;
    asio::post(io, [this] {
      http->close();
      frontend->engine.shutdown();
      if (signals) signals->cancel();
    });
  }
  // A graceful stop ends every coroutine and timer; give up waiting after 10 s.
  std::promise<void> done;
  auto finished = done.get_future();
  std::thread watchdog([this, &finished] {
    if (finished.wait_for(std::chrono::seconds(10)) != std::future_status::ready) io.stop();
  });
  thread.join();
  done.set_value();
  watchdog.join();
  {
    std::lock_guard lock(mutex);
    running = false;
  }
  changed.notify_all();
}

void Server::Impl::wait_for_shutdown_signal() {
  on_io([this] {
    if (signals || !running) return;
    signals.emplace(io, SIGINT, SIGTERM);
    signals->async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;
      std::lock_guard lock(mutex);
      signalled = true;
      changed.notify_all();
    });
  });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [this] { return signalled || stopped || !running; });
  }
  stop();
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() = default;

void Server::start() {
  impl_->start();
}
void Server::stop() {
  impl_->stop();
}
void Server::wait_for_shutdown_signal() {
  impl_->wait_for_shutdown_signal();
}

std::uint16_t Server::port() const {
  return impl_->port;
}
std::string Server::base_url() const {
  return impl_->base_url;
}
const std::filesystem::path& Server::data_dir() const {
  return impl_->data_dir;
}

std::string Server::tokenizer_id() const {
  if (impl_->options.catalogue.empty()) throw error(errc::invalid_configuration, "the catalogue is empty");
  return tokenizer_id(impl_->options.catalogue.front().name);
}

std::string Server::tokenizer_id(std::string_view base_model) const {
  return tokenizer_id_of(impl_->options, catalogue_entry(impl_->options, base_model).tokenizer);
}

std::filesystem::path Server::tokenizer_file() const {
  if (impl_->options.catalogue.empty()) throw error(errc::invalid_configuration, "the catalogue is empty");
  return tokenizer_file(impl_->options.catalogue.front().name);
}

std::filesystem::path Server::tokenizer_file(std::string_view base_model) const {
  const auto& tokenizer = impl_->tokenizers.of(catalogue_entry(impl_->options, base_model).tokenizer);
  return tokenizer ? tokenizer->model_file() : std::filesystem::path();
}

AuditReport Server::audit() const {
  return impl_->on_io([this] { return impl_->frontend ? impl_->frontend->audit() : AuditReport(); });
}

std::vector<std::string> Server::telemetry_batches() const {
  return impl_->on_io(
      [this] { return impl_->frontend ? impl_->frontend->engine.telemetry_batches() : std::vector<std::string>(); });
}

void Server::set_faults(std::vector<FaultRule> rules) {
  impl_->on_io([this, &rules] {
    if (impl_->frontend) {
      impl_->frontend->faults.replace(std::move(rules));
    } else {
      impl_->options.faults = std::move(rules);
    }
  });
}

void Server::advance_clock(std::chrono::seconds by) {
  impl_->on_io([this, by] {
    if (!impl_->frontend) throw error(errc::invalid_configuration, "advance_clock needs a started server");
    impl_->frontend->engine.clock().advance(by);
  });
}

void Server::cancel_session(const std::string& session_id, std::optional<std::string> detail) {
  impl_->on_io([this, &session_id, &detail] {
    if (!impl_->frontend) throw error(errc::invalid_configuration, "cancel_session needs a started server");
    try {
      impl_->frontend->engine.cancel_session(session_id, std::move(detail));
    } catch (const HttpError& e) {
      throw error(errc::invalid_argument, std::string("cancel_session: ") + e.what());
    }
  });
}

void Server::corrupt_model(const std::string& model_id, std::string detail) {
  impl_->on_io([this, &model_id, &detail] {
    if (!impl_->frontend) throw error(errc::invalid_configuration, "corrupt_model needs a started server");
    try {
      impl_->frontend->engine.corrupt_model(model_id, std::move(detail));
    } catch (const HttpError& e) {
      throw error(errc::invalid_argument, std::string("corrupt_model: ") + e.what());
    }
  });
}

void Server::replace_checkpoint_archive(const std::string& tinker_path, std::string tar) {
  impl_->on_io([this, &tinker_path, &tar] {
    if (!impl_->frontend) throw error(errc::invalid_configuration, "replace_checkpoint_archive needs a started server");
    try {
      impl_->frontend->engine.replace_checkpoint_archive(tinker_path, std::move(tar));
    } catch (const HttpError& e) {
      throw error(errc::invalid_argument, e.what());
    }
  });
}

}  // namespace tinker::local
