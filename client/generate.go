package client

// api.gen.go is generated from the API's OpenAPI document by oapi-codegen,
// pinned here. The generator's own package comment (its first two lines) is
// dropped, so that `go doc` shows doc.go's.
//go:generate sh -c "go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../api/openapi.json | awk 'NR == 3 { print; print \"\"; next } NR > 2' > api.gen.go"
