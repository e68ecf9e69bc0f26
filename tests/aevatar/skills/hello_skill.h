#ifndef AEVATAR_TESTS_AEVATAR_SKILLS_HELLO_SKILL_H_
#define AEVATAR_TESTS_AEVATAR_SKILLS_HELLO_SKILL_H_

namespace aevatar::orchestrator::skilltest {

// A one-step workflow for the skill tests' bundles (valid: ParseWorkflowYaml).
inline constexpr char kHelloWorkflow[] = R"(workflow_id: hello-check
steps:
  - id: hello
    tool: code_execute
    arguments:
      language: python
      source: print("hello")
)";

}  // namespace aevatar::orchestrator::skilltest

#endif  // AEVATAR_TESTS_AEVATAR_SKILLS_HELLO_SKILL_H_
