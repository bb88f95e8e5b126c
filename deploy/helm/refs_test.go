package helm_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/hookrelay/hookrelay/config"
)

// probeWant is what each component's probes check (api/api.go's /healthz
// and /readyz; for the worker, what `hookrelay healthcheck worker` checks)
// and the variable holding the address they reach.
var probeWant = map[string]struct{ port, live, ready, addrVar string }{
	"hookrelay-api":    {"http", "/healthz", "/readyz", "HOOKRELAY_HTTP_ADDR"},
	"hookrelay-worker": {"metrics", "/metrics", "/metrics", "HOOKRELAY_METRICS_ADDR"},
}

// TestProbesFollowHealthChecks: the API's liveness is /healthz and its
// readiness /readyz, the worker's both /metrics, each on the named port
// the process listens on (the port of its address variable).
func TestProbesFollowHealthChecks(t *testing.T) {
	for name, r := range renderAll(t) {
		for deployment, want := range probeWant {
			d := named[appsv1.Deployment](r, deployment)
			if d == nil {
				t.Fatalf("values %s: no Deployment %s", name, deployment)
			}
			c := d.Spec.Template.Spec.Containers[0]
			for _, p := range probeProblems(c, want.port, want.live, want.ready) {
				t.Errorf("values %s: %s: %s", name, deployment, p)
			}
			_, port, err := net.SplitHostPort(envValue(c, want.addrVar))
			if cp := containerPort(c, want.port); err != nil || port != strconv.Itoa(int(cp)) {
				t.Errorf("values %s: %s: %s=%q, but port %s is %d", name, deployment, want.addrVar,
					envValue(c, want.addrVar), want.port, cp)
			}
		}
	}
}

// probeProblems checks the probes' paths and port, and that they speak
// HTTPS exactly when the container serves it (HOOKRELAY_TLS_CERT).
func probeProblems(c corev1.Container, port, live, ready string) []string {
	var out []string
	scheme := corev1.URISchemeHTTP
	if envValue(c, config.EnvTLSCert) != "" {
		scheme = corev1.URISchemeHTTPS
	}
	check := func(kind string, p *corev1.Probe, path string) {
		switch {
		case p == nil || p.HTTPGet == nil:
			out = append(out, kind+" probe is not an HTTP GET")
		case p.HTTPGet.Path != path || p.HTTPGet.Port.String() != port:
			out = append(out, fmt.Sprintf("%s probe gets %s on %s, want %s on %s", kind, p.HTTPGet.Path, p.HTTPGet.Port.String(), path, port))
		case p.HTTPGet.Scheme != scheme && (p.HTTPGet.Scheme != "" || scheme != corev1.URISchemeHTTP):
			out = append(out, fmt.Sprintf("%s probe speaks %s to a container serving %s", kind, p.HTTPGet.Scheme, scheme))
		}
	}
	check("liveness", c.LivenessProbe, live)
	check("readiness", c.ReadinessProbe, ready)
	if containerPort(c, port) == 0 {
		out = append(out, "no container port named "+port)
	}
	return out
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// envValue is a variable's literal value in a container ("" if none).
func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestSelectorsMatch: each Deployment's selector matches its pods; each
// Service and PodDisruptionBudget selects the pods of exactly one
// Deployment, and a Service's target ports are ports of those pods.
func TestSelectorsMatch(t *testing.T) {
	for name, r := range renderAll(t) {
		for _, d := range all[appsv1.Deployment](r) {
			if n := len(selected(r, d.Spec.Selector)); n != 1 {
				t.Errorf("values %s: Deployment %s's selector matches %d Deployments' pods", name, d.Name, n)
			}
		}
		for _, s := range all[corev1.Service](r) {
			ds := selected(r, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
			if len(ds) != 1 {
				t.Errorf("values %s: Service %s selects %d Deployments' pods", name, s.Name, len(ds))
				continue
			}
			for _, p := range s.Spec.Ports {
				if containerPort(ds[0].Spec.Template.Spec.Containers[0], p.TargetPort.String()) == 0 {
					t.Errorf("values %s: Service %s targets %s, no port of %s", name, s.Name, p.TargetPort.String(), ds[0].Name)
				}
			}
		}
		for _, p := range all[policyv1.PodDisruptionBudget](r) {
			if n := len(selected(r, p.Spec.Selector)); n != 1 {
				t.Errorf("values %s: PodDisruptionBudget %s selects %d Deployments' pods", name, p.Name, n)
			}
		}
	}
}

// selected are the Deployments whose pods the selector matches.
func selected(r *rendering, sel *metav1.LabelSelector) []*appsv1.Deployment {
	return matching(r, sel, func(d *appsv1.Deployment) map[string]string { return d.Spec.Template.Labels })
}

// matching are the rendered objects of type T whose labels (as labelsOf
// reads them) the selector matches; an empty or invalid selector matches none.
func matching[T any](r *rendering, sel *metav1.LabelSelector, labelsOf func(*T) map[string]string) []*T {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return nil
	}
	var out []*T
	for _, o := range all[T](r) {
		if s.Matches(labels.Set(labelsOf(o))) {
			out = append(out, o)
		}
	}
	return out
}
