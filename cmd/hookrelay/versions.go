package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hookrelay/hookrelay/workflows"
)

// versionsCmd is `hookrelay versions`.
type versionsCmd struct {
	JSON bool `help:"Print the rows as JSON."`
}

// Run lists the open runs of every workflow type by version.
func (v *versionsCmd) Run(e *session) error {
	return e.withApp(func(a *app, ctx context.Context) error {
		c, err := a.dialTemporal(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		rows, err := listVersions(ctx, c, a.cfg.TemporalNamespace)
		if err != nil {
			return err
		}
		if v.JSON {
			return json.NewEncoder(e.stdout).Encode(map[string]any{"versions": rows})
		}
		return printVersions(e.stdout, rows)
	})
}

// versionRow is the open runs of one workflow type at one version: how
// many, the oldest's start, and the GetVersion changes they recorded
// (TemporalChangeVersion values, each with how many runs have it).
type versionRow struct {
	WorkflowType string         `json:"workflow_type"`
	Version      string         `json:"version"`
	Open         int            `json:"open"`
	OldestStart  *time.Time     `json:"oldest_start"`
	Changes      map[string]int `json:"changes"`
}

// listVersions reads every open run of hookrelay's workflow types from
// Temporal's visibility and groups them by version: a Delivery by
// workflows.DeliveryRunVersion (its changeLocalBookkeeping marker, else its
// input's version, read from its first history event), every other type by
// the changes it recorded ("initial" for none). A type without open runs
// has one row, version "-", 0 open.
func listVersions(ctx context.Context, c client.Client, ns string) ([]versionRow, error) {
	var rows []versionRow
	for _, typ := range workflows.WorkflowTypes {
		groups := map[string]*versionRow{}
		err := eachOpenRun(ctx, c, ns, typ, func(info *workflowpb.WorkflowExecutionInfo) error {
			changes := changeVersions(info.GetSearchAttributes())
			version, err := runVersion(ctx, c, ns, typ, info, changes)
			if err != nil {
				return err
			}
			addRun(groups, typ, version, info.GetStartTime().AsTime(), changes)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(groups) == 0 {
			rows = append(rows, versionRow{WorkflowType: typ, Version: "-", Changes: map[string]int{}})
		}
		for _, k := range slices.Sorted(maps.Keys(groups)) {
			rows = append(rows, *groups[k])
		}
	}
	return rows, nil
}

// eachOpenRun calls f with every open run of typ, a page at a time.
func eachOpenRun(ctx context.Context, c client.Client, ns, typ string, f func(*workflowpb.WorkflowExecutionInfo) error) error {
	req := &workflowservice.ListWorkflowExecutionsRequest{Namespace: ns, PageSize: 1000,
		Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", typ)}
	for {
		resp, err := c.ListWorkflow(ctx, req)
		if err != nil {
			return fmt.Errorf("temporal: listing the open %s runs: %w", typ, err)
		}
		for _, info := range resp.GetExecutions() {
			if err := f(info); err != nil {
				return err
			}
		}
		if req.NextPageToken = resp.GetNextPageToken(); len(req.NextPageToken) == 0 {
			return nil
		}
	}
}

// addRun counts a run in its group.
func addRun(groups map[string]*versionRow, typ, version string, start time.Time, changes []string) {
	g, ok := groups[version]
	if !ok {
		g = &versionRow{WorkflowType: typ, Version: version, Changes: map[string]int{}}
		groups[version] = g
	}
	g.Open++
	if g.OldestStart == nil || start.Before(*g.OldestStart) {
		s := start.UTC()
		g.OldestStart = &s
	}
	for _, ch := range changes {
		g.Changes[ch]++
	}
}

// runVersion is a run's version as the listing groups it.
func runVersion(ctx context.Context, c client.Client, ns, typ string, info *workflowpb.WorkflowExecutionInfo, changes []string) (string, error) {
	if typ != "Delivery" {
		if len(changes) == 0 {
			return "initial", nil
		}
		return strings.Join(changes, ","), nil
	}
	input := 0
	if !workflows.DeliveryVersionFromChanges(changes) {
		v, err := deliveryInputVersion(ctx, c, ns, info.GetExecution())
		if err != nil {
			return "", err
		}
		input = v
	}
	return fmt.Sprint(workflows.DeliveryRunVersion(input, changes)), nil
}

// deliveryInputVersion reads DeliveryInput.Version from a Delivery run's
// first history event.
func deliveryInputVersion(ctx context.Context, c client.Client, ns string, run *commonpb.WorkflowExecution) (int, error) {
	resp, err := c.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace: ns, Execution: run, MaximumPageSize: 1})
	if err != nil {
		return 0, fmt.Errorf("temporal: the start of %s: %w", run.GetWorkflowId(), err)
	}
	events := resp.GetHistory().GetEvents()
	if len(events) == 0 {
		return 0, fmt.Errorf("temporal: %s has no history", run.GetWorkflowId())
	}
	var in struct{ Version int }
	payloads := events[0].GetWorkflowExecutionStartedEventAttributes().GetInput()
	if err := converter.GetDefaultDataConverter().FromPayloads(payloads, &in); err != nil {
		return 0, fmt.Errorf("the input of %s: %w", run.GetWorkflowId(), err)
	}
	return in.Version, nil
}

// changeVersions are the TemporalChangeVersion values of a run's search
// attributes, sorted.
func changeVersions(sa *commonpb.SearchAttributes) []string {
	p, ok := sa.GetIndexedFields()[workflows.ChangeVersionAttribute]
	if !ok {
		return nil
	}
	var changes []string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &changes); err != nil {
		var one string // a single value, as some servers return a one-element list
		if converter.GetDefaultDataConverter().FromPayload(p, &one) == nil && one != "" {
			changes = []string{one}
		}
	}
	sort.Strings(changes)
	return changes
}

// printVersions writes the rows as a table.
func printVersions(w io.Writer, rows []versionRow) error {
	t := newTable(w)
	t.row("WORKFLOW", "VERSION", "OPEN", "OLDEST START", "CHANGES RECORDED")
	for _, r := range rows {
		var changes []string
		for _, k := range slices.Sorted(maps.Keys(r.Changes)) {
			changes = append(changes, fmt.Sprintf("%s (%d)", k, r.Changes[k]))
		}
		t.row(r.WorkflowType, r.Version, r.Open, r.OldestStart, strings.Join(changes, ", "))
	}
	return t.flush()
}
