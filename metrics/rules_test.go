package metrics_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/testenv"
)

const rulesDir = "../ops/prometheus"

// TestAlertRulesCheck: the example alerting rules pass `promtool check
// rules` and their unit tests (`promtool test rules`), with Debian's
// promtool, which `make bootstrap` installs.
func TestAlertRulesCheck(t *testing.T) {
	promtool := testenv.Tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", "rules.yml"}, {"test", "rules", "rules_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = rulesDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// sourceFunc fills metrics.Source with a function.
type sourceFunc func(context.Context) (metrics.Gauges, error)

func (f sourceFunc) Gauges(ctx context.Context) (metrics.Gauges, error) { return f(ctx) }

// TestAlertRulesNameRealMetrics: every hookrelay_* metric the rules use is
// one hookrelay exports.
func TestAlertRulesNameRealMetrics(t *testing.T) {
	m := metrics.New()
	m.WithSource(sourceFunc(func(context.Context) (metrics.Gauges, error) {
		return metrics.Gauges{EndpointsByState: map[string]int{}}, nil
	}), nil)
	m.Published(1)
	m.Operational("hookrelay.endpoint.frozen")
	m.Finished("dead_lettered", "workfront", time.Second, true)
	m.Attempt(false, "timeout", time.Second, true, time.Second)
	m.SweeperStarted(1)
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range families {
		have[f.GetName()] = true
	}
	rules, err := os.ReadFile(rulesDir + "/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`hookrelay_[a-z_]+`).FindAllString(string(rules), -1) {
		if base := strings.TrimSuffix(name, "_bucket"); !have[base] {
			t.Errorf("rules.yml uses %s, which hookrelay does not export", name)
		}
	}
}
