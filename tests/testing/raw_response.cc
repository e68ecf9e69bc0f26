#include "testing/raw_response.h"

#include <cctype>
#include <cstdlib>

namespace aevatar::testing {
namespace {

std::string LowerAscii(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::optional<std::string> RawResponse::Header(const std::string& name) const {
  std::string wanted = LowerAscii(name) + ":";
  size_t start = head.find("\r\n");
  while (start != std::string::npos) {
    start += 2;
    size_t end = head.find("\r\n", start);
    std::string line = head.substr(start, end == std::string::npos ? end : end - start);
    if (LowerAscii(line).rfind(wanted, 0) == 0) {
      std::string value = line.substr(wanted.size());
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      return value;
    }
    start = end;
  }
  return std::nullopt;
}

std::optional<RawResponse> ReadRawResponse(std::string& pending,
                                           const std::function<bool(std::string&)>& fill,
                                           bool expect_body) {
  size_t end;
  while ((end = pending.find("\r\n\r\n")) == std::string::npos) {
    if (!fill(pending)) return std::nullopt;
  }
  RawResponse response;
  response.head = pending.substr(0, end);
  pending.erase(0, end + 4);
  // "HTTP/1.1 200 …": the status code starts after the first space.
  size_t space = response.head.find(' ');
  if (space != std::string::npos) response.status = std::atoi(response.head.c_str() + space + 1);
  size_t length = 0;
  if (auto header = response.Header("Content-Length"); header && expect_body) {
    length = std::strtoul(header->c_str(), nullptr, 10);
  }
  while (pending.size() < length) {
    if (!fill(pending)) return std::nullopt;
  }
  response.body = pending.substr(0, length);
  pending.erase(0, length);
  return response;
}

}  // namespace aevatar::testing
