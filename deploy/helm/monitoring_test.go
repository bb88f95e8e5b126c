package helm_test

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/hookrelay/hookrelay/config"
)

// rulesFile is the alerting rules' one home; the chart links to it.
const rulesFile = "../../ops/prometheus/rules.yml"

// TestPrometheusRuleIsRulesFile: the PrometheusRule carries exactly the
// groups of ops/prometheus/rules.yml.
func TestPrometheusRuleIsRulesFile(t *testing.T) {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(b, &want); err != nil {
		t.Fatalf("%s as a PrometheusRule's spec: %v", rulesFile, err)
	}
	if len(want.Groups) == 0 || len(want.Groups[0].Rules) == 0 {
		t.Fatalf("%s holds no rules", rulesFile)
	}
	rules := all[monitoringv1.PrometheusRule](renderAll(t)["production"])
	if len(rules) != 1 {
		t.Fatalf("production values render %d PrometheusRules", len(rules))
	}
	if !reflect.DeepEqual(rules[0].Spec, want) {
		t.Errorf("the PrometheusRule's spec differs from %s:\n%+v\nwant\n%+v", rulesFile, rules[0].Spec, want)
	}
}

// TestServiceMonitorScrapesAsRulesExpect: the ServiceMonitor's endpoints
// are ports of the Services it selects; the API's carries the metrics
// token from a Secret key the API reads too; the job names it gives are
// those the rules query.
func TestServiceMonitorScrapesAsRulesExpect(t *testing.T) {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range renderAll(t) {
		for _, sm := range all[monitoringv1.ServiceMonitor](r) {
			jobs := endpointJobs(t, name, r, sm)
			for _, m := range regexp.MustCompile(`job="([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
				if !slices.Contains(jobs, m[1]) {
					t.Errorf("values %s: rules query job %q, which ServiceMonitor %s does not name (%v)", name, m[1], sm.Name, jobs)
				}
			}
		}
	}
}

// endpointJobs checks each endpoint of sm and returns the job names it sets.
func endpointJobs(t *testing.T, name string, r *rendering, sm *monitoringv1.ServiceMonitor) []string {
	t.Helper()
	services := matching(r, &sm.Spec.Selector, func(s *corev1.Service) map[string]string { return s.Labels })
	var jobs []string
	for _, ep := range sm.Spec.Endpoints {
		if !slices.ContainsFunc(services, func(s *corev1.Service) bool { return hasPort(s, ep.Port) }) {
			t.Errorf("values %s: ServiceMonitor endpoint port %q is no port of a Service it selects", name, ep.Port)
		}
		for _, rl := range ep.RelabelConfigs {
			if rl.TargetLabel == "job" && rl.Replacement != nil {
				jobs = append(jobs, *rl.Replacement)
			}
		}
		if ep.Port != "http" {
			continue
		}
		auth := ep.Authorization
		if auth == nil || auth.Credentials == nil || auth.Type != "Bearer" {
			t.Errorf("values %s: the API's endpoint sends no bearer token", name)
			continue
		}
		api := named[corev1.Service](r, "hookrelay-api")
		if api == nil || !hasPort(api, "http") || !slices.Contains(services, api) {
			t.Errorf("values %s: port http is not the API Service's", name)
		}
		if want := apiScheme(r); ep.Scheme == nil || ep.Scheme.String() != want {
			t.Errorf("values %s: the API's endpoint scrapes with scheme %v, the API serves %s", name, ep.Scheme, want)
		}
		token := ref{"Secret", auth.Credentials.Name, auth.Credentials.Key, false}
		if err := resolve(r, workload{name: "ServiceMonitor"}, token); err != nil {
			t.Errorf("values %s: the metrics token %s/%s: %v", name, token.name, token.key, err)
		}
	}
	return jobs
}

// apiScheme is what the API Deployment serves: https with its own certificate.
func apiScheme(r *rendering) string {
	d := named[appsv1.Deployment](r, "hookrelay-api")
	if d != nil && envValue(d.Spec.Template.Spec.Containers[0], config.EnvTLSCert) != "" {
		return "https"
	}
	return "http"
}

func hasPort(s *corev1.Service, name string) bool {
	return slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == name })
}
