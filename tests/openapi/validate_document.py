"""Validates one OpenAPI 3.1 document with openapi-spec-validator.

Usage: python3 validate_document.py FILE. Exit 0 and "valid" when it passes;
exit 1 with every error (its JSON path and message) otherwise; exit 3 when
openapi-spec-validator is not installed. Run by the services' OpenAPI tests
(tests/testing/openapi_check.h).
"""
import json
import sys

try:
    from openapi_spec_validator import OpenAPIV31SpecValidator
except ImportError:
    print("openapi_spec_validator is not installed")
    sys.exit(3)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        document = json.load(f)
    errors = list(OpenAPIV31SpecValidator(document).iter_errors())
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path)
        print(f"{sys.argv[1]}: at /{where}: {error.message}")
    if errors:
        return 1
    print("valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
