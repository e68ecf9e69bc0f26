// Every service under `aevatar up` against abusive clients on loopback: clients
// that vanish mid-request, slowloris clients, 100 MB bodies, 10,000 idle
// connections and 1 MB request lines, a bounded number of each. Meanwhile a
// prober fetches /healthz from all three services and samples the process's
// resident memory; each test holds the probes to: every one answered 200
// within the hang guard, however slow the machine (latency is a benchmark's
// business, not a test's).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "http/client.h"
#include "http_test_util.h"
#include "nyxid_fixture.h"
#include "os/fd_limit.h"
#include "service_process.h"
#include "testing/proc_file.h"

namespace aevatar::testing {
namespace {

using Clock = std::chrono::steady_clock;
using http::testing::RawConnection;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kServices = 3;  // nyxid, chrono-sandbox, aevatar on port-base + 0, 1, 2
const char* const kServiceNames[kServices] = {"nyxid", "chrono-sandbox", "aevatar"};
constexpr long kMaxRssGrowthKib = 200 << 10;
constexpr int kIdleConnections = 10000;

// Returns the pid of the process (not this one) whose command line holds `needle`.
pid_t FindProcess(const std::string& needle) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = testing::ReadProcFile(entry.path() / "cmdline");
    pid_t pid = std::atoi(name.c_str());
    if (pid != ::getpid() && cmdline.find(needle) != std::string::npos) return pid;
  }
  return -1;
}

// VmRSS of `pid` in KiB, or -1.
long RssKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

int OpenFds(pid_t pid) {
  std::error_code ec;
  int count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++count;
  }
  return count;
}

// Fetches /healthz from each service in turn until stopped, timing each
// exchange and sampling the server's RSS.
class Prober {
 public:
  Prober(std::vector<uint16_t> ports, pid_t pid) : ports_(std::move(ports)), pid_(pid) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Prober() { Stop(); }

  // Stops probing and checks every service answered every probe.
  void ExpectHealthy() {
    // A short abuse can end before the prober had its turn: a few probes
    // more, after it, still say whether the services came through it.
    EXPECT_TRUE(PollUntil([&] { return fewest_probes() >= 3; }));
    Stop();
    for (int i = 0; i < kServices; ++i) {
      SCOPED_TRACE(kServiceNames[i]);
      EXPECT_EQ(failures_[i], 0) << "first failure: " << first_failure_[i];
      EXPECT_GE(answered_[i], 3) << "too few probes";
    }
  }
  long peak_rss_kib() const { return peak_rss_kib_.load(); }
  // Probes answered so far by the service that has answered the fewest.
  int fewest_probes() const {
    int fewest = probes_[0];
    for (const auto& count : probes_) fewest = std::min(fewest, count.load());
    return fewest;
  }

 private:
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  void Run() {
    while (!stop_) {
      for (int i = 0; i < kServices; ++i) {
        http::ClientRequest request;
        request.url = "http://127.0.0.1:" + std::to_string(ports_[i]) + "/healthz";
        request.timeout = kHangGuard;
        auto response = http::Fetch(request);
        ++probes_[i];
        if (response.ok() && response->status == 200) {
          ++answered_[i];
        } else if (failures_[i]++ == 0) {
          first_failure_[i] = response.ok() ? "status " + std::to_string(response->status)
                                            : std::string(response.status().message());
        }
        peak_rss_kib_ = std::max(peak_rss_kib_.load(), RssKib(pid_));
      }
      std::this_thread::sleep_for(milliseconds(20));  // pacing, not synchronisation
    }
  }

  const std::vector<uint16_t> ports_;
  const pid_t pid_;
  std::atomic<bool> stop_{false};
  std::atomic<long> peak_rss_kib_{0};
  std::atomic<int> probes_[kServices] = {};
  // Written by the probing thread only, read after it is joined.
  int answered_[kServices] = {};
  int failures_[kServices] = {};
  std::string first_failure_[kServices];
  std::thread thread_;
};

// Sends `head`, then `body_bytes` of body (Content-Length framing, or 1 MiB
// chunks when `chunked`), reading whatever the server answers meanwhile and
// sending on after its answer, as an abusive client would. Stops once the
// server has closed (or reset) the connection or after 20 s. Returns the
// bytes received.
std::string SendLargeBody(uint16_t port, const std::string& head, size_t body_bytes, bool chunked) {
  RawConnection connection(port);
  if (!connection.connected() || !connection.Send(head)) return "";
  const int fd = connection.fd();
  const std::string chunk(1 << 20, 'b');
  std::string pending;
  size_t queued = 0;  // body bytes moved into `pending`
  std::string received;
  bool eof = false;
  bool writable = true;
  const auto deadline = Clock::now() + seconds(20);
  while ((writable || !eof) && Clock::now() < deadline) {
    if (writable && pending.empty() && queued < body_bytes) {
      const size_t n = std::min(chunk.size(), body_bytes - queued);
      std::ostringstream size_hex;
      size_hex << std::hex << n;
      pending =
          chunked ? size_hex.str() + "\r\n" + chunk.substr(0, n) + "\r\n" : chunk.substr(0, n);
      queued += n;
      if (chunked && queued == body_bytes) pending += "0\r\n\r\n";
    }
    if (pending.empty()) writable = false;  // all sent
    pollfd entry{fd, static_cast<short>((eof ? 0 : POLLIN) | (writable ? POLLOUT : 0)), 0};
    if (::poll(&entry, 1, 5000) <= 0) break;
    if (!eof && (entry.revents & (POLLIN | POLLHUP | POLLERR))) {
      char buffer[16 << 10];
      ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) {
        received.append(buffer, static_cast<size_t>(n));
      } else if (n == 0) {
        eof = true;  // the server answered and stopped sending; it may still drain
      } else if (errno != EAGAIN) {
        break;  // reset
      }
    }
    if (writable && (entry.revents & (POLLOUT | POLLHUP | POLLERR))) {
      ssize_t n = ::send(fd, pending.data(), pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        pending.erase(0, static_cast<size_t>(n));
      } else if (errno != EAGAIN) {
        writable = false;  // the server closed; read what is left of its answer
      }
    }
  }
  return received;
}

int StatusOf(const std::string& raw) {
  return raw.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(raw.substr(9, 3).c_str()) : 0;
}

class HttpAbuse : public ::testing::Test {
 protected:
  void SetUp() override {
    auto limit = os::RaiseOpenFileLimit();  // this process holds the idle connections
    ASSERT_TRUE(limit.ok()) << limit.status();
    fd_limit_ = *limit;
    // The range is free when picked; another test may still bind it first, so retry.
    uint16_t base = 0;
    for (int attempt = 0; attempt < 5 && !(up_ && up_->ok()); ++attempt) {
      base = PickFreePortRange(kServices);
      state_dir_ = dir_.path() + "/state" + std::to_string(attempt);  // holds the ports
      up_ = std::make_unique<ServiceProcess>(
          std::vector<std::string>{BinaryPath("aevatar"), "up", "--state-dir", state_dir_,
                                   "--port-base", std::to_string(base)},
          dir_.path() + "/up.log");
    }
    ASSERT_TRUE(up_->ok()) << up_->ReadLog();
    for (int i = 0; i < kServices; ++i) ports_.push_back(static_cast<uint16_t>(base + i));
    pid_ = FindProcess(state_dir_);
    ASSERT_GT(pid_, 0);
    for (uint16_t port : ports_) {
      http::ClientRequest request;
      request.url = "http://127.0.0.1:" + std::to_string(port) + "/healthz";
      auto response = http::Fetch(request);
      ASSERT_TRUE(response.ok() && response->status == 200) << "port " << port;
    }
    baseline_rss_kib_ = RssKib(pid_);
    baseline_fds_ = OpenFds(pid_);
  }

  // Waits (up to the hang guard) for the server's descriptors to fall back
  // near the baseline: nothing an abusive client did is left open.
  void ExpectNoConnectionsLeft() {
    int fds = OpenFds(pid_);
    PollUntil([&] { return (fds = OpenFds(pid_)) <= baseline_fds_ + 32; });
    EXPECT_LE(fds, baseline_fds_ + 32) << "baseline " << baseline_fds_;
  }

  TempDir dir_;
  std::string state_dir_;
  std::unique_ptr<ServiceProcess> up_;
  std::vector<uint16_t> ports_;
  pid_t pid_ = -1;
  uint64_t fd_limit_ = 0;
  long baseline_rss_kib_ = 0;
  int baseline_fds_ = 0;
};

TEST_F(HttpAbuse, ClientsVanishingMidRequestLeaveNothingBehind) {
  Prober prober(ports_, pid_);
  const std::vector<std::string> cut_off = {
      "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Partial: ab",                   // mid-header
      "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 4096\r\n\r\n{",  // mid-body
      "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n",                            // before the answer
  };
  // At least 100 rounds, and on until the prober has watched 10 probes each.
  for (int round = 0; round < 100 || (prober.fewest_probes() < 10 && round < 2000); ++round) {
    for (uint16_t port : ports_) {
      for (const std::string& request : cut_off) {
        RawConnection connection(port);
        ASSERT_TRUE(connection.Send(request));
        if (round % 2 == 0) connection.Reset();  // else a plain close
      }                                          // gone without a word
    }
  }
  ExpectNoConnectionsLeft();
  prober.ExpectHealthy();
  EXPECT_EQ(::kill(pid_, 0), 0);
}

TEST_F(HttpAbuse, SlowlorisClientsAreCutOffAtTheHeaderDeadline) {
  constexpr int kPerService = 50;
  constexpr auto kHeaderTimeout = seconds(10);  // ServerOptions::header_timeout's default
  Prober prober(ports_, pid_);
  struct Slow {
    std::unique_ptr<RawConnection> connection;
    bool closed = false;
  };
  std::vector<Slow> slow;
  for (uint16_t port : ports_) {
    for (int i = 0; i < kPerService; ++i) {
      slow.push_back({std::make_unique<RawConnection>(port)});
      ASSERT_TRUE(slow.back().connection->Send("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: "));
    }
  }
  // One more header byte per connection every 250 ms, for as long as the
  // server lets the connection live (the header never ends).
  const auto start = Clock::now();
  int open = static_cast<int>(slow.size());
  while (open > 0 && Clock::now() - start < kHeaderTimeout + seconds(10)) {
    for (Slow& each : slow) {
      if (each.closed) continue;
      if (each.connection->PeerClosed(milliseconds(0)) || !each.connection->Send("s")) {
        each.closed = true;
        --open;
      }
    }
    std::this_thread::sleep_for(milliseconds(250));  // the trickle's pace
  }
  EXPECT_EQ(open, 0) << "connections still open "
                     << std::chrono::duration_cast<seconds>(Clock::now() - start).count()
                     << " s into a header that never ends";
  prober.ExpectHealthy();
}

TEST_F(HttpAbuse, HundredMegabyteBodiesAre413WithoutBeingBuffered) {
  constexpr size_t kBody = 100 << 20;
  Prober prober(ports_, pid_);
  std::vector<std::thread> senders;
  std::vector<std::string> answers(kServices * 2);
  for (int i = 0; i < kServices; ++i) {
    const uint16_t port = ports_[i];
    senders.emplace_back([&answers, i, port] {
      answers[2 * i] = SendLargeBody(port,
                                     "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                         std::to_string(kBody) + "\r\n\r\n",
                                     kBody, /*chunked=*/false);
    });
    senders.emplace_back([&answers, i, port] {
      answers[2 * i + 1] = SendLargeBody(
          port, "POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n", kBody,
          /*chunked=*/true);
    });
  }
  for (auto& sender : senders) sender.join();
  for (int i = 0; i < kServices * 2; ++i) {
    SCOPED_TRACE(std::string(kServiceNames[i / 2]) + (i % 2 ? " chunked" : " content-length"));
    EXPECT_EQ(StatusOf(answers[i]), 413) << answers[i].substr(0, 200);
    EXPECT_NE(answers[i].find("BODY_TOO_LARGE"), std::string::npos);
  }
  prober.ExpectHealthy();
  RecordProperty("peak_rss_growth_kib", prober.peak_rss_kib() - baseline_rss_kib_);
  EXPECT_LT(prober.peak_rss_kib() - baseline_rss_kib_, kMaxRssGrowthKib)
      << "baseline " << baseline_rss_kib_ << " KiB, peak " << prober.peak_rss_kib() << " KiB";
}

TEST_F(HttpAbuse, TenThousandIdleConnectionsPerService) {
  // This process needs a descriptor per connection too; a machine whose hard
  // limit is lower gets as many as fit.
  const int count =
      static_cast<int>(std::min<uint64_t>(kIdleConnections, fd_limit_ > 512 ? fd_limit_ - 512 : 0));
  ASSERT_GT(count, 0);
  RecordProperty("idle_connections", count);
  Prober prober(ports_, pid_);
  for (int i = 0; i < kServices; ++i) {
    SCOPED_TRACE(kServiceNames[i]);
    const long rss_before_kib = RssKib(pid_);
    std::vector<std::unique_ptr<RawConnection>> idle;
    idle.reserve(count);
    for (int n = 0; n < count; ++n) {
      idle.push_back(std::make_unique<RawConnection>(ports_[i]));
      ASSERT_TRUE(idle.back()->connected()) << "connection " << n;
    }
    // The last of them is served like any other connection.
    ASSERT_TRUE(idle.back()->Send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto response = idle.back()->Read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 200);
    // Each service's I/O threads allocate from their own arenas, so measure
    // each round on its own: under 10 KiB per idle connection.
    const long grown_kib = RssKib(pid_) - rss_before_kib;
    EXPECT_LT(grown_kib, 10L * count) << count << " idle connections";
    RecordProperty(std::string(kServiceNames[i]) + "_rss_growth_kib", grown_kib);
    // Reset, not closed: 10,000 client-side TIME_WAITs would hold as many
    // local ports (and this machine's next listeners) for a minute.
    for (auto& connection : idle) connection->Reset();
  }
  prober.ExpectHealthy();
  ExpectNoConnectionsLeft();
}

TEST_F(HttpAbuse, MegabyteRequestLinesAre414) {
  constexpr int kPerService = 20;
  Prober prober(ports_, pid_);
  const std::string request = "GET /" + std::string(1 << 20, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n";
  // At least 20 per service, and on until the prober has watched 10 probes each.
  for (int n = 0; n < kPerService || (prober.fewest_probes() < 10 && n < 500); ++n) {
    for (int i = 0; i < kServices; ++i) {
      SCOPED_TRACE(kServiceNames[i]);
      RawConnection connection(ports_[i]);
      ASSERT_TRUE(connection.Send(request));
      auto response = connection.Read();
      ASSERT_TRUE(response.has_value());
      EXPECT_EQ(response->status, 414);
      EXPECT_TRUE(connection.PeerClosed(kHangGuard));
    }
  }
  prober.ExpectHealthy();
}

}  // namespace
}  // namespace aevatar::testing
