package starter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// listChunk is how many workflow ids one visibility query names.
const listChunk = 100

// visible returns the status Temporal's visibility shows for each of the
// workflow ids: a running run's when one runs, else the latest run's. An
// id it shows no run of is absent; so is one that a query could not name
// (a quote in it). Visibility follows the workflows a little behind: a run
// closed a moment ago may still show as running.
func (s *Starter) visible(ctx context.Context, ids []string) (map[string]statusAt, error) {
	seen := map[string]statusAt{}
	for chunk := range slices.Chunk(quotable(ids), listChunk) {
		req := &workflowservice.ListWorkflowExecutionsRequest{Query: idsQuery(chunk), PageSize: int32(2 * len(chunk))}
		for {
			resp, err := s.Temporal.ListWorkflow(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("starter: list workflows: %w", err)
			}
			for _, info := range resp.GetExecutions() {
				id := info.GetExecution().GetWorkflowId()
				seen[id] = seen[id].or(statusAt{info.GetStatus(), info.GetStartTime().AsTime().UnixNano()})
			}
			if req.NextPageToken = resp.GetNextPageToken(); len(req.NextPageToken) == 0 {
				break
			}
		}
	}
	return seen, nil
}

// statusAt is a run's status and when it started.
type statusAt struct {
	status  enumspb.WorkflowExecutionStatus
	started int64
}

// or is the run that tells a workflow's status, of s (zero: none yet) and
// r: a running one, else the later one.
func (s statusAt) or(r statusAt) statusAt {
	running := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	if s.started != 0 && (s.status == running || r.status != running && s.started >= r.started) {
		return s
	}
	return r
}

// quotable is the ids a query can name between single quotes.
func quotable(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return strings.ContainsAny(id, `'"\`) })
}

// idsQuery is the visibility query for the runs of these workflow ids.
func idsQuery(ids []string) string {
	return "WorkflowId IN ('" + strings.Join(ids, "', '") + "')"
}
