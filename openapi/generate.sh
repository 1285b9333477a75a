#!/usr/bin/env bash
# Regenerates the Go code of both OpenAPI documents. Run from the repository root:
#   bash openapi/generate.sh
# Uses .bin/oapi-codegen (the version pinned in go.mod), building it when missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

gen=.bin/oapi-codegen
if [[ ! -x $gen ]]; then
  go build -o .bin/ github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
fi

for api in server rules; do
  rm -f gen/${api}api/*.gen.go gen/${api}client/*.gen.go
  mkdir -p gen/${api}api gen/${api}client
  for part in types server spec client; do
    "$gen" -config "openapi/${api}.${part}.yaml" "openapi/${api}.yaml"
  done
done
