package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestTrimVisibility: on Temporal's visibility schema (go.temporal.io/
// server's, in a real PostgreSQL), dropUnusedIndexes drops the unused indexes
// and those of the custom columns no attribute is mapped to, keeps the
// mapped ones and those the Web UI and Temporal's features filter by, and
// drops nothing when run again.
func TestTrimVisibility(t *testing.T) {
	url := testenv.DatabaseURL(t)
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	loadVisibilitySchema(t, db)
	before := indexNames(t, db)
	mapped := map[string]bool{"Keyword01": true, "Keyword06": true, "Int01": true, "KeywordList02": true}
	dropped, err := dropUnusedIndexes(t.Context(), url, mapped)
	if err != nil {
		t.Fatal(err)
	}
	after := indexNames(t, db)
	if len(after) != len(before)-len(dropped) {
		t.Errorf("%d indexes, %d dropped, %d left", len(before), len(dropped), len(after))
	}
	for _, name := range []string{"executions_visibility_pkey", "default_idx", "by_workflow_id", "by_workflow_type",
		"by_status", "by_execution_time", "by_temporal_change_version", "by_temporal_namespace_division",
		"by_parent_workflow_id", "by_keyword_01", "by_keyword_06", "by_int_01", "by_keyword_list_02"} {
		if !slices.Contains(after, name) {
			t.Errorf("%s was dropped", name)
		}
	}
	for _, name := range []string{"by_history_length", "by_binary_checksums", "by_temporal_keyword_01",
		"by_keyword_02", "by_keyword_10", "by_int_02", "by_bool_01", "by_text_03", "by_keyword_list_01"} {
		if slices.Contains(after, name) || !slices.Contains(before, name) {
			t.Errorf("%s: before %v, after %v", name, slices.Contains(before, name), slices.Contains(after, name))
		}
	}
	if again, err := dropUnusedIndexes(t.Context(), url, mapped); err != nil || len(again) != 0 {
		t.Errorf("run again: dropped %v, %v", again, err)
	}
}

// loadVisibilitySchema creates Temporal's visibility tables in db from the
// server module's schema file.
func loadVisibilitySchema(t *testing.T, db *sqlx.DB) {
	root, err := devenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := schemaDir(root)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile(filepath.Join(dir, "visibility", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), string(schema)); err != nil {
		t.Fatal(err)
	}
}

// indexNames is visibilityIndexes, failing t on an error.
func indexNames(t *testing.T, db *sqlx.DB) []string {
	names, err := visibilityIndexes(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return names
}
