package helm_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// ref is an object a pod needs when it starts, and the key it reads.
type ref struct {
	kind, name, key string
	optional        bool
}

func podRefs(p corev1.PodSpec) []ref {
	refs := []ref{{kind: "ServiceAccount", name: p.ServiceAccountName}}
	for _, v := range p.Volumes {
		if v.Secret != nil {
			refs = append(refs, ref{kind: "Secret", name: v.Secret.SecretName})
		}
	}
	for _, c := range p.Containers {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				refs = append(refs, ref{kind: "ConfigMap", name: e.ConfigMapRef.Name})
			}
			if e.SecretRef != nil {
				refs = append(refs, ref{kind: "Secret", name: e.SecretRef.Name})
			}
		}
		for _, e := range c.Env {
			if s := e.ValueFrom; s != nil && s.SecretKeyRef != nil {
				refs = append(refs, ref{"Secret", s.SecretKeyRef.Name, s.SecretKeyRef.Key, ptrTrue(s.SecretKeyRef.Optional)})
			}
			if s := e.ValueFrom; s != nil && s.ConfigMapKeyRef != nil {
				refs = append(refs, ref{"ConfigMap", s.ConfigMapKeyRef.Name, s.ConfigMapKeyRef.Key, ptrTrue(s.ConfigMapKeyRef.Optional)})
			}
		}
	}
	return refs
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// TestReferencesExistWhenPodsStart: every ConfigMap, Secret, key and
// service account a pod reads is rendered (or named in values as the
// user's own) and exists when the pod starts: the setup Job, a pre-install
// hook, runs before the release's objects exist, so it may read only hooks
// that run before it, or the user's own objects; the other pods read no
// hook (hooks may be deleted once they succeed).
func TestReferencesExistWhenPodsStart(t *testing.T) {
	for name, r := range renderAll(t) {
		for _, w := range workloads(r) {
			for _, rf := range podRefs(w.pod.Spec) {
				if err := resolve(r, w, rf); err != nil {
					t.Errorf("values %s: %s reads %s %s: %v", name, w.name, rf.kind, rf.name, err)
				}
			}
		}
	}
}

func resolve(r *rendering, w workload, rf ref) error {
	i := slices.IndexFunc(r.objects, func(o object) bool { return o.kind == rf.kind && o.meta.Name == rf.name })
	if i < 0 {
		if !external(r, rf) {
			return fmt.Errorf("neither rendered nor named in values as the user's own")
		}
		return nil
	}
	o := r.objects[i]
	switch {
	case w.hook && !o.hook:
		return fmt.Errorf("a release object, made only after the hook %s has run", w.name)
	case w.hook && hookWeight(o) >= setupWeight(r):
		return fmt.Errorf("a hook running after (or with) %s", w.name)
	case !w.hook && o.hook:
		return fmt.Errorf("a hook, deleted once it succeeds")
	}
	if rf.key == "" || rf.optional {
		return nil
	}
	if !hasKey(o.obj, rf.key) {
		return fmt.Errorf("has no key %s", rf.key)
	}
	return nil
}

func hasKey(obj any, key string) bool {
	switch v := obj.(type) {
	case *corev1.Secret:
		_, data := v.Data[key]
		_, str := v.StringData[key]
		return data || str
	case *corev1.ConfigMap:
		_, ok := v.Data[key]
		return ok
	}
	return false
}

// external: the values name rf as an object the user makes.
func external(r *rendering, rf ref) bool {
	v := r.values
	str := func(path ...string) string {
		s, _ := v.PathValue(strings.Join(path, "."))
		str, _ := s.(string)
		return str
	}
	switch rf.kind {
	case "Secret":
		return rf.name != "" && slices.Contains(userSecrets(r), rf.name)
	case "ServiceAccount":
		// Every namespace has "default".
		create, _ := v.PathValue("serviceAccount.create")
		return rf.name == "default" || (create == false && rf.name == str("serviceAccount", "name"))
	}
	return false
}

// userSecrets are the Secrets the values name as the user's own.
func userSecrets(r *rendering) []string {
	var names []string
	for _, path := range []string{"secrets.existingSecret", "encryption.existingSecret", "temporal.tls.secretName", "api.tls.secretName"} {
		if v, _ := r.values.PathValue(path); v != nil {
			names = append(names, v.(string))
		}
	}
	extra, _ := r.values["extraEnv"].([]any)
	for _, e := range extra {
		var env corev1.EnvVar
		b, _ := yaml.Marshal(e)
		if yaml.Unmarshal(b, &env) == nil && env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil {
			names = append(names, env.ValueFrom.SecretKeyRef.Name)
		}
	}
	return names
}

func hookWeight(o object) int {
	n, _ := strconv.Atoi(o.meta.Annotations["helm.sh/hook-weight"])
	return n
}

func setupWeight(r *rendering) int {
	for _, o := range r.objects {
		if _, ok := o.obj.(*batchv1.Job); ok {
			return hookWeight(o)
		}
	}
	return 0
}

// TestSetupRunsBeforeInstallAndUpgrade: `hookrelay setup` is a Job hooked
// before every install and upgrade, that does not restart in place and
// registers the namespace only when the values ask.
func TestSetupRunsBeforeInstallAndUpgrade(t *testing.T) {
	for name, r := range renderAll(t) {
		jobs := all[batchv1.Job](r)
		if len(jobs) != 1 {
			t.Fatalf("values %s: %d Jobs", name, len(jobs))
		}
		j := jobs[0]
		events := strings.Split(j.Annotations["helm.sh/hook"], ",")
		if !slices.Contains(events, "pre-install") || !slices.Contains(events, "pre-upgrade") {
			t.Errorf("values %s: the setup Job hooks %v, want pre-install and pre-upgrade", name, events)
		}
		create, _ := r.values.PathValue("temporal.createNamespace")
		want := []string{"setup"}
		if create == true {
			want = append(want, "--create-namespace")
		}
		if args := j.Spec.Template.Spec.Containers[0].Args; !slices.Equal(args, want) {
			t.Errorf("values %s: the setup Job runs %v, want %v", name, args, want)
		}
		if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || j.Spec.BackoffLimit == nil {
			t.Errorf("values %s: the setup Job restarts %s with backoffLimit %v", name, j.Spec.Template.Spec.RestartPolicy, j.Spec.BackoffLimit)
		}
	}
}
