package cluster

import (
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// unusedVisibilityIndexes are indexes of Temporal's PostgreSQL visibility
// table (executions_visibility, go.temporal.io/server v1.32.1's schema) on
// columns nothing on this stack filters by: history and transition counts,
// retired build checksums, external payload sizes, and the columns Temporal
// reserves for features hookrelay does not use. The table has 74 indexes
// and every workflow writes its row twice (started, closed), each time into
// every index: on the cluster at 50 deliveries a second its PostgreSQL
// spent as much CPU on visibility as on the rest of Temporal's store
// (docs/operations.md#temporals-visibility-indexes). The indexes used by
// the Web UI's filters, schedules, batch operations, worker versioning,
// GetVersion's TemporalChangeVersion and the parent and root workflow links
// are kept.
var unusedVisibilityIndexes = []string{
	"by_history_length", "by_history_size_bytes", "by_execution_duration", "by_state_transition_count",
	"by_binary_checksums", "by_temporal_external_payload_size_bytes", "by_temporal_external_payload_count",
	"by_temporal_bool_01", "by_temporal_bool_02", "by_temporal_datetime_01", "by_temporal_datetime_02",
	"by_temporal_double_01", "by_temporal_double_02", "by_temporal_int_01", "by_temporal_int_02",
	"by_temporal_keyword_01", "by_temporal_keyword_02", "by_temporal_keyword_03", "by_temporal_keyword_04",
	"by_temporal_low_cardinality_keyword_01", "by_temporal_keyword_list_01", "by_temporal_keyword_list_02",
}

// customKinds are the kinds of custom search-attribute columns and how many
// of each the schema has (Keyword01 to Keyword10…).
var customKinds = []struct {
	column, index string
	n             int
}{{"Bool", "bool", 3}, {"Datetime", "datetime", 3}, {"Double", "double", 3}, {"Int", "int", 3},
	{"Keyword", "keyword", 10}, {"KeywordList", "keyword_list", 3}, {"Text", "text", 3}}

// customIndexes are the indexes of the custom search-attribute columns no
// namespace maps an attribute to (mapped: column names such as Keyword01,
// whose index is by_keyword_01).
func customIndexes(mapped map[string]bool) []string {
	var out []string
	for _, k := range customKinds {
		for i := 1; i <= k.n; i++ {
			if !mapped[fmt.Sprintf("%s%02d", k.column, i)] {
				out = append(out, fmt.Sprintf("by_%s_%02d", k.index, i))
			}
		}
	}
	return out
}

// dropUnusedIndexes drops, from the visibility database at url, the indexes
// of unusedVisibilityIndexes and those of the custom columns mapped holds
// none of; it can run again. It returns the indexes it dropped.
func dropUnusedIndexes(ctx context.Context, url string, mapped map[string]bool) ([]string, error) {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("cluster: visibility database: %w", err)
	}
	defer db.Close()
	all, err := visibilityIndexes(ctx, db)
	if err != nil {
		return nil, err
	}
	unused := append(customIndexes(mapped), unusedVisibilityIndexes...)
	present := slices.DeleteFunc(all, func(name string) bool { return !slices.Contains(unused, name) })
	for i, name := range present {
		if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS `+pq.QuoteIdentifier(name)); err != nil {
			return present[:i], fmt.Errorf("cluster: drop visibility index %s: %w", name, err)
		}
	}
	return present, nil
}

// visibilityIndexes are the names of the indexes of Temporal's visibility
// table (executions_visibility) in db.
func visibilityIndexes(ctx context.Context, db *sqlx.DB) ([]string, error) {
	var names []string
	err := db.SelectContext(ctx, &names, `SELECT indexname FROM pg_indexes WHERE tablename = 'executions_visibility'`)
	if err != nil {
		return nil, fmt.Errorf("cluster: visibility indexes: %w", err)
	}
	return names, nil
}

// mappedColumns are the custom search-attribute columns any namespace of
// the cluster maps an attribute to (one page of namespaces: the stack has
// two, default and temporal-system).
func (c *Cluster) mappedColumns(ctx context.Context) (map[string]bool, error) {
	conn, err := grpc.NewClient(c.Temporal, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	res, err := workflowservice.NewWorkflowServiceClient(conn).ListNamespaces(ctx, &workflowservice.ListNamespacesRequest{PageSize: 100})
	if err != nil {
		return nil, fmt.Errorf("cluster: list namespaces: %w", err)
	}
	mapped := map[string]bool{}
	for _, ns := range res.Namespaces {
		for col := range ns.GetConfig().GetCustomSearchAttributeAliases() {
			mapped[col] = true
		}
	}
	return mapped, nil
}

// trimVisibility runs dropUnusedIndexes on the cluster once hookrelay's setup
// has mapped its search attributes.
func (c *Cluster) trimVisibility(ctx context.Context) error {
	mapped, err := c.mappedColumns(ctx)
	if err != nil {
		return err
	}
	dropped, err := dropUnusedIndexes(ctx, c.PG.DatabaseURL("temporal_visibility"), mapped)
	if err == nil {
		c.cfg.Logger.Info("visibility_indexes_trimmed", "dropped", len(dropped), "mapped_columns", len(mapped))
	}
	return err
}
