#!/usr/bin/env bash
# Validates public/openapi.yaml against the OpenAPI 3.1 specification.
# Exits non-zero when the document is invalid. Installs openapi-spec-validator if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-public/openapi.yaml}
python=${PYTHON:-python3}

if ! "$python" -c 'import openapi_spec_validator, yaml' 2>/dev/null; then
    "$python" -m pip install --quiet --disable-pip-version-check openapi-spec-validator PyYAML >/dev/null
fi

"$python" - "$spec" <<'PY'
import sys
import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

path = sys.argv[1]
try:
    with open(path, encoding="utf-8") as f:
        document = yaml.safe_load(f)
except (OSError, yaml.YAMLError) as error:
    sys.exit(f"{path}: cannot read: {error}")
if not isinstance(document, dict) or not str(document.get("openapi", "")).startswith("3.1"):
    sys.exit(f"{path}: not an OpenAPI 3.1 document")
try:
    validate(document)  # picks the 3.1 validator from the `openapi` field
except OpenAPIValidationError as error:
    sys.exit(f"{path}: invalid: {error}")
except Exception as error:  # e.g. a $ref that points nowhere
    sys.exit(f"{path}: invalid: {type(error).__name__}: {str(error)[:500]}")
print(f"{path}: valid OpenAPI {document['openapi']} ({len(document.get('paths', {}))} paths)")
PY
