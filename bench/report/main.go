// Command report makes BENCHMARKS.md's and RELIABILITY.md's tables from a
// run's data file (bench/results: one JSON line a phase, written by `make
// bench`, `make chaos` and `make test-cluster`).
//
//	go run ./bench/report FILE      # print every table made from FILE
//	go run ./bench/report -w FILE   # rewrite the documents' tables from FILE
//
// A table sits in its document between `<!-- results FILE TABLE -->` and
// `<!-- end results -->`; -w names FILE in every marker and writes the
// table under it. A test checks that every committed table is the one its
// marker's file makes, so a table and its run cannot disagree.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookrelay/hookrelay/bench/results"
)

// documents are the files whose marked tables report writes, relative to
// the repository's root.
var documents = []string{"BENCHMARKS.md", "RELIABILITY.md", "docs/benchmarks.md"}

func main() {
	write := flag.Bool("w", false, "rewrite the tables of "+strings.Join(documents, " and ")+" from FILE")
	root := flag.String("root", ".", "the repository's root")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./bench/report [-w] [-root DIR] FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*root, flag.Arg(0), *write); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// run prints every table made from file, or with write rewrites the
// documents' marked tables from it.
func run(root, file string, write bool) error {
	rel, err := relative(root, file)
	if err != nil {
		return err
	}
	lines, err := results.Read(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	if !write {
		for _, name := range tableNames() {
			fmt.Printf("%s\n\n%s\n", name, tables[name](lines))
		}
		return nil
	}
	for _, doc := range documents {
		path := filepath.Join(root, doc)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := rewrite(string(b), func(string) (string, []results.Line, error) { return rel, lines, nil })
		if err != nil {
			return fmt.Errorf("%s: %w", doc, err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// relative is file's path from the repository's root, with forward
// slashes, as the markers name it.
func relative(root, file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absRoot, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside the repository %s", file, absRoot)
	}
	return filepath.ToSlash(rel), nil
}
