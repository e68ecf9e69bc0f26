#ifndef AEVATAR_TESTS_AEVATAR_WORKFLOW_TEST_UTIL_H_
#define AEVATAR_TESTS_AEVATAR_WORKFLOW_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

// Shared fixtures for the workflow definition tests.
namespace aevatar::orchestrator::wftest {

// The bundled skill's workflow, read from the source tree.
inline std::string BundledDurableCheckYaml() {
  const std::filesystem::path path =
      std::filesystem::path(AEVATAR_SOURCE_DIR) / "skills" /
      "aevatar-code-execute-durable-check/assets/code-execute-durable-check.yaml";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A small valid two-step workflow tree (JSON is also valid YAML).
inline nlohmann::json ValidTree() {
  return nlohmann::json::parse(R"wf({
    "workflow_id": "wf-check",
    "description": "two steps",
    "inputs": [
      {"name": "seconds", "type": "integer", "default": 5},
      {"name": "label", "type": "string"},
      {"name": "verbose", "type": "boolean", "default": false}
    ],
    "steps": [
      {"id": "first", "tool": "code_execute",
       "arguments": {"language": "python", "source": "print(${inputs.seconds})"},
       "expect": {"exit_code": 0}},
      {"id": "second", "tool": "code_execute",
       "arguments": {"language": "bash", "source": "echo ${steps.first.trimmed_output}",
                     "timeout_secs": 10, "env": {"LABEL": "${inputs.label}"}},
       "timeout_ms": 20000}
    ]
  })wf");
}

// Parses `yaml`, requiring success.
inline WorkflowDefinition MustParse(const std::string& yaml) {
  auto def = ParseWorkflowYaml(yaml);
  EXPECT_TRUE(def.ok()) << def.status();
  return def.ok() ? *def : WorkflowDefinition{};
}

}  // namespace aevatar::orchestrator::wftest

#endif  // AEVATAR_TESTS_AEVATAR_WORKFLOW_TEST_UTIL_H_
