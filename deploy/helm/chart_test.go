package helm_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// wantObjects are the objects each values set renders, "hook" marking
// Helm hooks.
var wantObjects = map[string][]string{
	"default": {"ConfigMap/hookrelay", "Deployment/hookrelay-api", "Deployment/hookrelay-worker",
		"PodDisruptionBudget/hookrelay-api", "PodDisruptionBudget/hookrelay-worker", "Secret/hookrelay",
		"Secret/hookrelay-encryption", "Service/hookrelay-api", "Service/hookrelay-worker", "ServiceAccount/hookrelay",
		"hook Job/hookrelay-setup", "hook Secret/hookrelay-setup"},
	"production": {"ConfigMap/hookrelay", "Deployment/hookrelay-api", "Deployment/hookrelay-worker",
		"PodDisruptionBudget/hookrelay-api", "PodDisruptionBudget/hookrelay-worker",
		"PrometheusRule/hookrelay", "Service/hookrelay-api", "Service/hookrelay-worker",
		"ServiceAccount/hookrelay", "ServiceMonitor/hookrelay", "hook Job/hookrelay-setup"},
	"cloud": {"ConfigMap/hookrelay", "Deployment/hookrelay-api", "Deployment/hookrelay-worker",
		"PodDisruptionBudget/hookrelay-worker", "Secret/hookrelay", "Secret/hookrelay-encryption", "Service/hookrelay-api",
		"Service/hookrelay-worker", "ServiceMonitor/hookrelay", "hook Job/hookrelay-setup",
		"hook Secret/hookrelay-setup"},
}

// TestChartRenders: each values set renders, as `helm install` would, the
// objects expected, each decoded strictly into its Kubernetes (or
// prometheus-operator) API type, with names and labels the API accepts.
func TestChartRenders(t *testing.T) {
	for name, r := range renderAll(t) {
		var got []string
		for _, o := range r.objects {
			id := o.kind + "/" + o.meta.Name
			if o.hook {
				id = "hook " + id
			}
			got = append(got, id)
			for _, problem := range metaProblems(o) {
				t.Errorf("%s: %s: %s", name, id, problem)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, wantObjects[name]) {
			t.Errorf("values %s rendered\n  %s\nwant\n  %s", name, strings.Join(got, "\n  "), strings.Join(wantObjects[name], "\n  "))
		}
		if !strings.Contains(r.notes, "hookrelay-api.hookrelay.svc") {
			t.Errorf("values %s: NOTES.txt does not name the API's address:\n%s", name, r.notes)
		}
	}
}

// metaProblems checks a name and labels as the API server does.
func metaProblems(o object) []string {
	check := validation.IsDNS1123Subdomain
	if o.kind == "Service" {
		check = validation.IsDNS1035Label
	}
	problems := check(o.meta.Name)
	for k, v := range o.meta.Labels {
		problems = append(problems, validation.IsQualifiedName(k)...)
		problems = append(problems, validation.IsValidLabelValue(v)...)
	}
	if o.meta.Namespace != "" {
		problems = append(problems, "sets a namespace: Helm's --namespace decides it")
	}
	return problems
}

// workload is a Deployment's or Job's pod template.
type workload struct {
	name string
	hook bool
	pod  corev1.PodTemplateSpec
}

func workloads(r *rendering) []workload {
	var out []workload
	for _, o := range r.objects {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{v.Name, o.hook, v.Spec.Template})
		case *batchv1.Job:
			out = append(out, workload{v.Name, o.hook, v.Spec.Template})
		}
	}
	return out
}

// TestPodsHardened: every pod runs non-root with the runtime's seccomp
// profile and no service account token; every container has a read-only
// root filesystem, no privilege escalation, no capabilities, the chart's
// image and resource requests.
func TestPodsHardened(t *testing.T) {
	for name, r := range renderAll(t) {
		image := r.values["image"].(map[string]any)["repository"].(string) + ":"
		for _, w := range workloads(r) {
			problems := podProblems(w.pod.Spec)
			for _, c := range w.pod.Spec.Containers {
				problems = append(problems, containerProblems(c)...)
				if !strings.HasPrefix(c.Image, image) {
					problems = append(problems, fmt.Sprintf("image %q is not %s…", c.Image, image))
				}
			}
			for _, p := range problems {
				t.Errorf("values %s: %s: %s", name, w.name, p)
			}
		}
	}
}

func podProblems(p corev1.PodSpec) []string {
	var out []string
	sc := p.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		out = append(out, "runAsNonRoot is not true")
	}
	// The image's user is "nonroot", a name the kubelet cannot check
	// runAsNonRoot against: a numeric runAsUser is needed.
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		out = append(out, "no non-zero runAsUser")
	}
	if sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		out = append(out, "seccomp profile is not RuntimeDefault")
	}
	if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
		out = append(out, "mounts a service account token")
	}
	if len(p.Containers) != 1 || len(p.InitContainers) != 0 {
		out = append(out, fmt.Sprintf("%d containers, %d init containers: want one", len(p.Containers), len(p.InitContainers)))
	}
	return out
}

func containerProblems(c corev1.Container) []string {
	var out []string
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		out = append(out, c.Name+": root filesystem is not read-only")
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		out = append(out, c.Name+": privilege escalation is allowed")
	}
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		out = append(out, c.Name+": capabilities are not all dropped")
	}
	req := c.Resources.Requests
	if req.Cpu().IsZero() || req.Memory().IsZero() {
		out = append(out, c.Name+": no cpu and memory requests")
	}
	if lim := c.Resources.Limits.Memory(); !lim.IsZero() && lim.Cmp(*req.Memory()) < 0 {
		out = append(out, c.Name+": memory limit under its request")
	}
	names := map[string]bool{}
	for _, e := range c.Env {
		if names[e.Name] {
			out = append(out, c.Name+": "+e.Name+" set twice")
		}
		names[e.Name] = true
		out = append(out, validation.IsEnvVarName(e.Name)...)
	}
	return out
}
