package helm_test

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"

	"github.com/hookrelay/hookrelay/config"
)

// secretVars are the variables that go in a Secret, never in a ConfigMap
// or a literal value.
var secretVars = []string{config.EnvDatabaseURL, config.EnvAdminKey, config.EnvMetricsToken, config.EnvTemporalAPIKey,
	config.EnvEventGridSASSecret}

// userSecret stands in for secrets.existingSecret, the user's own Secret.
var userSecret = map[string]string{
	config.EnvDatabaseURL:  "postgres://hookrelay@db.example:5432/hookrelay?sslmode=verify-full",
	config.EnvAdminKey:     "0123456789abcdef0123456789abcdef",
	config.EnvMetricsToken: "metrics-token",
}

// containerEnv is the environment a container starts with: its ConfigMaps,
// its variables and the keys of the Secrets it reads (the user's own
// standing in as userSecret).
func containerEnv(t *testing.T, r *rendering, c corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef == nil {
			t.Fatalf("%s: envFrom other than a ConfigMap", c.Name)
		}
		if cm := named[corev1.ConfigMap](r, e.ConfigMapRef.Name); cm != nil {
			maps.Copy(env, cm.Data)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			k := e.ValueFrom.SecretKeyRef
			if s := named[corev1.Secret](r, k.Name); s != nil {
				if v, ok := s.Data[k.Key]; ok {
					env[e.Name] = string(v)
				}
			} else if v, ok := userSecret[k.Key]; ok {
				env[e.Name] = v
			}
		default:
			t.Fatalf("%s: %s comes from neither a value nor a Secret", c.Name, e.Name)
		}
	}
	return env
}

// TestContainersLoadTheirConfig: every container's environment is one
// hookrelay's own config.Load accepts, listening on all interfaces, with
// the Temporal TLS files inside a mounted volume.
func TestContainersLoadTheirConfig(t *testing.T) {
	for name, r := range renderAll(t) {
		for _, w := range workloads(r) {
			c := w.pod.Spec.Containers[0]
			env := containerEnv(t, r, c)
			keysFile(t, r, w.pod.Spec, c, env)
			cfg, err := config.Load(func(k string) string { return env[k] })
			if err != nil {
				t.Errorf("values %s: %s: %v", name, w.name, err)
				continue
			}
			if strings.HasSuffix(w.name, "-api") {
				apiConfigProblems(t, name, r, cfg)
			}
			if cfg.Encryption.Keys == nil && !strings.HasSuffix(w.name, "-setup") {
				t.Errorf("values %s: %s has no encryption key ring", name, w.name)
			}
			if name != "default" && cfg.DatabaseURL == "" {
				t.Errorf("values %s: %s has no DATABASE_URL", name, w.name)
			}
			for _, f := range []string{cfg.Temporal.CAFile, cfg.Temporal.CertFile, cfg.Temporal.KeyFile, cfg.TLS.CertFile, cfg.TLS.KeyFile} {
				if f != "" && !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
					return strings.HasPrefix(f, m.MountPath+"/")
				}) {
					t.Errorf("values %s: %s reads %s outside its volumes", name, w.name, f)
				}
			}
			if name != "default" && !cfg.Temporal.TLS {
				t.Errorf("values %s: %s connects to Temporal without TLS", name, w.name)
			}
		}
	}
}

// apiConfigProblems: the API has an admin key, listens on all interfaces
// and reads every secret given in values, under its variable.
func apiConfigProblems(t *testing.T, name string, r *rendering, cfg config.Config) {
	t.Helper()
	if cfg.Security.AdminKey == "" || !strings.HasPrefix(cfg.HTTPAddr, "0.0.0.0:") {
		t.Errorf("values %s: the API has no admin key or listens on %s only", name, cfg.HTTPAddr)
	}
	for path, got := range map[string]string{"postgresql.url": cfg.DatabaseURL, "temporal.apiKey": cfg.Temporal.APIKey,
		"secrets.adminKey": cfg.Security.AdminKey, "secrets.metricsToken": cfg.Metrics.Token,
		"secrets.eventGridSASSecret": cfg.EventGrid.SASSecret} {
		if v, _ := r.values.PathValue(path); v != nil && v != "" && v != got {
			t.Errorf("values %s: %s does not reach the API (it reads %q)", name, path, got)
		}
	}
}

// TestEveryVariableHasAPlace: every variable config.Variables() lists is
// set by the chart (rendered with the values sets) or is a key of the
// values' config map; everything the chart sets, and every key of config,
// is a variable hookrelay reads; values.schema.json accepts the same keys.
func TestEveryVariableHasAPlace(t *testing.T) {
	known := config.Variables()
	defaults, err := chartutil.ReadValuesFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(defaults["config"].(map[string]any)))
	placed := map[string]string{}
	for _, k := range keys {
		placed[k] = "values.yaml config"
	}
	for name, r := range renderAll(t) {
		for _, w := range workloads(r) {
			for _, v := range wiredNames(r, w.pod.Spec.Containers[0]) {
				placed[v] = name + " " + w.name
			}
		}
	}
	if where := placed[config.EnvEncryptionKeysFile]; where != "" {
		placed[config.EnvEncryptionKeys] = where + " (as its file)"
	}
	for v, where := range placed {
		if !slices.Contains(known, v) {
			t.Errorf("%s sets %s, which config/ does not read", where, v)
		}
	}
	for _, v := range known {
		if placed[v] == "" {
			t.Errorf("%s has no place in the chart", v)
		}
	}
	if schema := schemaConfigKeys(t); !slices.Equal(schema, keys) {
		t.Errorf("values.schema.json accepts config keys\n  %v\nvalues.yaml has\n  %v", schema, keys)
	}
}

// TestValuesRefuseUnknownNames: a misspelt variable under config, a short
// admin key or an unknown setting stops the render (values.schema.json and
// the templates) instead of being ignored.
func TestValuesRefuseUnknownNames(t *testing.T) {
	for _, bad := range []chartutil.Values{
		{"config": map[string]any{"HOOKRELAY_LOGLEVEL": "debug"}},
		{"config": map[string]any{config.EnvDatabaseURL: "postgres://db/hookrelay"}},
		{"secrets": map[string]any{"adminKey": "too-short"}},
		{"workers": map[string]any{"replicas": 3}},
		{"temporal": map[string]any{"tls": map[string]any{"secretName": "tls", "certKey": ""}}},
	} {
		if _, err := renderValues(bad); err == nil {
			t.Errorf("values %v rendered", bad)
		}
	}
}

// wiredNames are the variables the chart gives a container: its ConfigMaps'
// keys and its env names, but for those the values add (extraEnv).
func wiredNames(r *rendering, c corev1.Container) []string {
	var names []string
	for _, e := range c.EnvFrom {
		if cm := e.ConfigMapRef; cm != nil && named[corev1.ConfigMap](r, cm.Name) != nil {
			names = slices.AppendSeq(names, maps.Keys(named[corev1.ConfigMap](r, cm.Name).Data))
		}
	}
	extra, _ := r.values["extraEnv"].([]any)
	for _, e := range c.Env {
		if !slices.ContainsFunc(extra, func(x any) bool { return x.(map[string]any)["name"] == e.Name }) {
			names = append(names, e.Name)
		}
	}
	return names
}

func schemaConfigKeys(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(chartDir + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Config struct {
				Properties map[string]any `json:"properties"`
			} `json:"config"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(s.Properties.Config.Properties))
}

// TestSecretsStayInSecrets: the secret variables reach containers only
// from Secrets, and the secrets given in values appear in no other object.
func TestSecretsStayInSecrets(t *testing.T) {
	for name, r := range renderAll(t) {
		for _, w := range workloads(r) {
			for _, e := range w.pod.Spec.Containers[0].Env {
				if slices.Contains(secretVars, e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
					t.Errorf("values %s: %s sets %s other than from a Secret", name, w.name, e.Name)
				}
			}
		}
		for _, cm := range all[corev1.ConfigMap](r) {
			for _, v := range secretVars {
				if _, ok := cm.Data[v]; ok {
					t.Errorf("values %s: ConfigMap %s holds %s", name, cm.Name, v)
				}
			}
		}
		var given []string
		for _, path := range []string{"postgresql.url", "temporal.apiKey", "secrets.adminKey", "secrets.metricsToken", "secrets.eventGridSASSecret"} {
			if v, _ := r.values.PathValue(path); v != nil && v != "" {
				given = append(given, v.(string))
			}
		}
		for _, o := range r.objects {
			for _, secret := range given {
				if o.kind != "Secret" && strings.Contains(o.raw, secret) {
					t.Errorf("values %s: %s %s holds a secret given in values", name, o.kind, o.meta.Name)
				}
			}
		}
	}
}
