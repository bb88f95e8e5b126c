// Package devenv starts the real servers hookrelay runs on in development and
// tests: a project-local PostgreSQL cluster and the Temporal CLI's dev server.
//
// The binaries come from the machine (PostgreSQL) and the project's bin/
// directory (Temporal); scripts/bootstrap.sh installs both. When a binary is
// missing the Start functions return an error wrapping ErrNotInstalled.
package devenv

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
)

// ErrNotInstalled is wrapped by the errors returned when a server binary
// cannot be found; run scripts/bootstrap.sh to install it.
var ErrNotInstalled = errors.New("server binary not installed (run scripts/bootstrap.sh)")

// FreePort returns a free TCP port on 127.0.0.1. Another process may take it
// before the caller binds it, so use it promptly.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RepoRoot finds the directory holding go.mod, walking up from the working
// directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repo root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repo root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// logSize returns the size of the file at path, 0 if it is missing.
func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logTail returns the last n lines written to the file at path after offset
// from, for error messages. A Go program that panicked prints the reason
// first and its goroutines' stacks after it, so when the reason is not among
// those lines it comes first, followed by "...".
func logTail(path string, from int64, n int) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < from {
		return ""
	}
	data = data[from:]
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		cut := len(lines) - n
		if i := slices.IndexFunc(lines[:cut], statesReason); i >= 0 {
			lines = append([][]byte{lines[i], []byte("...")}, lines[cut:]...)
		} else {
			lines = lines[cut:]
		}
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// statesReason tells whether line states why a Go program stopped
// ("panic: ..." or "fatal error: ...").
func statesReason(line []byte) bool {
	return bytes.HasPrefix(line, []byte("panic: ")) || bytes.HasPrefix(line, []byte("fatal error: "))
}
