// code_execute's `runtime` argument: checked for shape before any network
// call, carried to the executor, and advertised in the tool list.
#include <string>

#include "aevatar/admission/tool_catalog.h"
#include "aevatar/tools/code_execute.h"
#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

TEST(CodeExecuteRuntime, AChosenRuntimeReachesTheExecutorsRequest) {
  auto args = ParseCodeExecuteArgs(
      R"({"language": "python", "source": "import pandas", "runtime": "python-data"})");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->runtime, "python-data");
  EXPECT_EQ(ExecutorRequestBody(*args)["runtime"], "python-data");

  auto plain = ParseCodeExecuteArgs(R"j({"language": "python", "source": "print(1)"})j");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(ExecutorRequestBody(*plain).contains("runtime"))
      << "a call without a runtime keeps the executor's request as it was";
  auto null_runtime =
      ParseCodeExecuteArgs(R"j({"language": "python", "source": "print(1)", "runtime": null})j");
  ASSERT_TRUE(null_runtime.ok());
  EXPECT_EQ(null_runtime->runtime, "");
}

TEST(CodeExecuteRuntime, AMalformedRuntimeIsATyped400BeforeAnyCall) {
  auto wrong_type =
      ParseCodeExecuteArgs(R"({"language": "python", "source": "x", "runtime": ["a"]})");
  EXPECT_EQ(base::ApiCode(wrong_type.status()), "INVALID_FIELD_TYPE");
  EXPECT_EQ(base::HttpStatusFor(wrong_type.status()), 400);
  for (const char* bad : {R"("")", R"("Python-Data")", R"("../etc")", R"("-x")"}) {
    auto parsed = ParseCodeExecuteArgs(
        std::string(R"({"language": "python", "source": "x", "runtime": )") + bad + "}");
    EXPECT_EQ(base::ApiCode(parsed.status()), "UNKNOWN_RUNTIME") << bad;
    EXPECT_EQ(base::HttpStatusFor(parsed.status()), 400) << bad;
  }
}

TEST(CodeExecuteRuntime, TheExecutorsRuntimeRefusalStaysATyped400) {
  for (const char* code : {"UNKNOWN_RUNTIME", "RUNTIME_LANGUAGE_MISMATCH"}) {
    NyxidReply reply;
    reply.status = 400;
    reply.body = {{"code", code}, {"status", 400}, {"diagnostic_id", "diag_chrono"}};
    reply.raw_body = reply.body.dump();
    const absl::Status st = UpstreamError(reply);
    EXPECT_EQ(base::ApiCode(st), code);
    EXPECT_EQ(base::HttpStatusFor(st), 400);
  }
}

TEST(ToolCatalogRuntimes, CodeExecuteListsTheOfferedRuntimes) {
  const json catalog = ToolCatalogJson({{"python-data", "python"}, {"node-libs", "javascript"}});
  const json& tool = catalog["tools"][0];
  ASSERT_EQ(tool["name"], "code_execute");
  EXPECT_EQ(tool["runtimes"], json::parse(R"([{"name": "python-data", "language": "python"},
                                              {"name": "node-libs", "language": "javascript"}])"));
  const json& property = tool["input_schema"]["properties"]["runtime"];
  EXPECT_EQ(property["type"], "string");
  EXPECT_EQ(property["enum"], json::parse(R"(["python-data", "node-libs"])"));
  EXPECT_NE(property["description"].get<std::string>().find("python-data (python)"),
            std::string::npos);
  // additionalProperties is false: the schema must name `runtime` to allow it.
  EXPECT_EQ(tool["input_schema"]["additionalProperties"], false);
}

TEST(ToolCatalogRuntimes, WithNoneOfferedTheArgumentStaysOpenToTheExecutor) {
  const json catalog = ToolCatalogJson();
  const json& tool = catalog["tools"][0];
  EXPECT_EQ(tool["runtimes"], json::array());
  EXPECT_FALSE(tool["input_schema"]["properties"]["runtime"].contains("enum"));
}

}  // namespace
}  // namespace aevatar::orchestrator
