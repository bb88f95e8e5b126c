//go:build tools

package main

// The schema tool is built from the same module version as the server:
// go build -o bin/temporal-sql-tool go.temporal.io/server/cmd/tools/sql
import _ "go.temporal.io/server/cmd/tools/sql"
