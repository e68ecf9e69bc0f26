// Hostile programs that try to reach the network: the host's loopback (where
// the service and its database listen), an outside address, the host's
// abstract unix sockets, and DNS. The run's network namespace holds only its
// own loopback, so every attempt must fail, and fail at once (no route)
// rather than by waiting for a timeout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "os/unique_fd.h"
#include "security_fixture.h"

namespace aevatar::security_test {
namespace {

using os::UniqueFd;
using Network = SecurityTest;

// A non-blocking socket bound on the host's 127.0.0.1; `port` is its port.
struct HostSocket {
  UniqueFd fd;
  int port = 0;
};

HostSocket BindLoopback(int type) {
  HostSocket host{UniqueFd(::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0))};
  EXPECT_TRUE(host.fd.valid()) << std::strerror(errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(host.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  if (type == SOCK_STREAM) {
    EXPECT_EQ(::listen(host.fd.get(), 16), 0);
  }
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::getsockname(host.fd.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  host.port = ntohs(addr.sin_port);
  return host;
}

// Nothing arrived: no connection to accept, no datagram to read.
void ExpectNothingArrived(const HostSocket& host, int type) {
  char byte;
  const int got = type == SOCK_STREAM ? ::accept4(host.fd.get(), nullptr, nullptr, SOCK_CLOEXEC)
                                      : static_cast<int>(::recv(host.fd.get(), &byte, 1, 0));
  EXPECT_EQ(got, -1) << "the host socket received something from the sandbox";
  EXPECT_EQ(errno, EAGAIN);
}

// Programs that connect to each "host:port" with a 2 s timeout and print
// "<host> <port> <outcome>": CONNECTED, TIMEOUT or the errno name.
std::vector<Program> TcpProbes(const std::vector<std::pair<std::string, int>>& targets) {
  std::string py, js, sh;
  for (const auto& [host, port] : targets) {
    const std::string p = std::to_string(port);
    py += "probe('" + host + "', " + p + ")\n";
    js += "await probe('" + host + "', " + p + ");\n";
    sh += "probe " + host + " " + p + "\n";
  }
  const std::string js_source =
      "const net = require('net');\n"
      "const probe = (host, port) => new Promise((done) => {\n"
      "  const s = net.connect({ host, port, timeout: 2000 });\n"
      "  s.on('connect', () => { console.log(host, port, 'CONNECTED'); s.destroy(); done(); });\n"
      "  s.on('timeout', () => { console.log(host, port, 'TIMEOUT'); s.destroy(); done(); });\n"
      "  s.on('error', (e) => { console.log(host, port, e.code); done(); });\n"
      "});\n"
      "(async () => {\n" +
      js + "})();\n";
  return {
      {Language::kPython,
       "import errno, socket\n"
       "def probe(host, port):\n"
       "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
       "    s.settimeout(2)\n"
       "    try:\n"
       "        s.connect((host, port))\n"
       "        print(host, port, 'CONNECTED')\n"
       "    except socket.timeout:\n"
       "        print(host, port, 'TIMEOUT')\n"
       "    except OSError as e:\n"
       "        print(host, port, errno.errorcode[e.errno])\n" +
           py},
      {Language::kJavaScript, js_source},
      {Language::kTypeScript, js_source},
      {Language::kBash,
       "probe() {\n"
       "  if timeout 2 bash -c \"exec 3<>/dev/tcp/$1/$2\" 2>/tmp/err; then echo \"$1 $2 "
       "CONNECTED\";\n"
       "  elif [ $? = 124 ]; then echo \"$1 $2 TIMEOUT\";\n"
       "  else\n"
       "    case \"$(cat /tmp/err)\" in\n"
       "      *refused*) echo \"$1 $2 ECONNREFUSED\";;\n"
       "      *unreachable*) echo \"$1 $2 ENETUNREACH\";;\n"
       "      *) echo \"$1 $2 OTHER $(cat /tmp/err)\";;\n"
       "    esac\n"
       "  fi\n"
       "}\n" +
           sh},
  };
}

TEST_F(Network, ConnectingToAHostLoopbackListenerFails) {
  HostSocket listener = BindLoopback(SOCK_STREAM);
  const std::string target = "127.0.0.1 " + std::to_string(listener.port) + " ";
  for (const Program& program : TcpProbes({{"127.0.0.1", listener.port}})) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    // The sandbox's own loopback has nobody on that port.
    EXPECT_EQ(r.stdout_data, target + "ECONNREFUSED\n") << Describe(r);
    ExpectNothingArrived(listener, SOCK_STREAM);
  }
}

TEST_F(Network, ConnectingToAnOutsideAddressFailsWithoutWaiting) {
  for (const Program& program : TcpProbes({{"1.1.1.1", 53}, {"8.8.8.8", 443}})) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
    // No route at all: an immediate ENETUNREACH, not a 2 s TIMEOUT.
    EXPECT_EQ(r.stdout_data, "1.1.1.1 53 ENETUNREACH\n8.8.8.8 443 ENETUNREACH\n") << Describe(r);
  }
}

TEST_F(Network, UdpDatagramsDoNotReachTheHostOrTheOutside) {
  HostSocket receiver = BindLoopback(SOCK_DGRAM);
  const std::string port = std::to_string(receiver.port);
  RunResult r = Run({Language::kPython,
                     "import errno, socket\n"
                     "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                     "for host, port in [('127.0.0.1', " +
                         port +
                         "), ('1.1.1.1', 53)]:\n"
                         "    try:\n"
                         "        s.sendto(b'escaped', (host, port))\n"
                         "        print(host, 'SENT')\n"
                         "    except OSError as e:\n"
                         "        print(host, errno.errorcode[e.errno])\n"});
  EXPECT_EQ(r.verdict, Verdict::kOk) << Describe(r);
  // The loopback send succeeds, into the sandbox's own loopback.
  EXPECT_EQ(r.stdout_data, "127.0.0.1 SENT\n1.1.1.1 ENETUNREACH\n") << Describe(r);
  ExpectNothingArrived(receiver, SOCK_DGRAM);
}

TEST_F(Network, HostAbstractUnixSocketIsNotReachable) {
  // Abstract unix sockets belong to the network namespace, not the filesystem.
  const std::string name = UniqueMarker("abstract");
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  const std::vector<Program> programs = {
      {Language::kPython,
       "import errno, socket\n"
       "s = socket.socket(socket.AF_UNIX)\n"
       "try:\n"
       "    s.connect('\\0" +
           name +
           "')\n"
           "    print('CONNECTED')\n"
           "except OSError as e:\n"
           "    print(errno.errorcode[e.errno])\n"},
      {Language::kJavaScript,
       "const s = require('net').connect({ path: '\\0" + name +
           "' });\n"
           "s.on('connect', () => { console.log('CONNECTED'); s.destroy(); });\n"
           "s.on('error', (e) => console.log(e.code));\n"},
  };
  for (const Program& program : programs) {
    SCOPED_TRACE(sandbox::LanguageName(program.language));
    RunResult r = Run(program);
    EXPECT_EQ(r.stdout_data, "ECONNREFUSED\n") << Describe(r);
    EXPECT_EQ(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC), -1);
    EXPECT_EQ(errno, EAGAIN);
  }
}

TEST_F(Network, OnlyLoopbackExistsAndNamesDoNotResolve) {
  const std::vector<Program> programs = {
      {Language::kPython,
       "import socket\n"
       "print(socket.if_nameindex())\n"
       "for name in ['example.com', 'host.docker.internal', 'metadata.google.internal']:\n"
       "    try:\n"
       "        print(name, 'RESOLVED', socket.getaddrinfo(name, 80))\n"
       "    except socket.gaierror as e:\n"
       "        print(name, 'UNRESOLVED')\n"},
      {Language::kJavaScript,
       "console.log(JSON.stringify(Object.keys(require('os').networkInterfaces())));\n"
       "require('dns').lookup('example.com', (e, a) => console.log('example.com',"
       " e ? 'UNRESOLVED' : 'RESOLVED ' + a));\n"},
  };
  RunResult py = Run(programs[0]);
  EXPECT_EQ(py.stdout_data,
            "[(1, 'lo')]\nexample.com UNRESOLVED\nhost.docker.internal UNRESOLVED\n"
            "metadata.google.internal UNRESOLVED\n")
      << Describe(py);
  RunResult js = Run(programs[1]);
  EXPECT_EQ(js.stdout_data, "[\"lo\"]\nexample.com UNRESOLVED\n") << Describe(js);
}

}  // namespace
}  // namespace aevatar::security_test
