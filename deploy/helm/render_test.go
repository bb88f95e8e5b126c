package helm_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "hookrelay"
	release   = "hookrelay"
	namespace = "hookrelay"
	// minKube is the oldest Kubernetes the chart says it runs on.
	minKube = "v1.30.0"
)

// valuesSets are the values the tests render the chart with: its defaults,
// the production example, and Temporal Cloud with the secrets in values.
var valuesSets = map[string]string{
	"default":    "",
	"production": "hookrelay/values-production.yaml",
	"cloud":      "testdata/values-cloud.yaml",
}

// object is one rendered Kubernetes object, decoded into its API type.
type object struct {
	source string // the template it came from
	hook   bool   // a Helm hook (helm.sh/hook)
	kind   string
	raw    string // its YAML
	meta   *metav1.ObjectMeta
	obj    any
}

// rendering is the chart rendered with one values set.
type rendering struct {
	values  chartutil.Values // the values merged with the chart's defaults
	objects []object
	notes   string
}

// newObject is the empty API type of each apiVersion and kind the chart
// may render: anything else fails the test.
var newObject = map[string]func() (any, *metav1.ObjectMeta){
	"v1/ConfigMap":      pair(func(o *corev1.ConfigMap) *metav1.ObjectMeta { return &o.ObjectMeta }),
	"v1/Secret":         pair(func(o *corev1.Secret) *metav1.ObjectMeta { return &o.ObjectMeta }),
	"v1/Service":        pair(func(o *corev1.Service) *metav1.ObjectMeta { return &o.ObjectMeta }),
	"v1/ServiceAccount": pair(func(o *corev1.ServiceAccount) *metav1.ObjectMeta { return &o.ObjectMeta }),
	"apps/v1/Deployment": pair(func(o *appsv1.Deployment) *metav1.ObjectMeta {
		return &o.ObjectMeta
	}),
	"batch/v1/Job": pair(func(o *batchv1.Job) *metav1.ObjectMeta { return &o.ObjectMeta }),
	"policy/v1/PodDisruptionBudget": pair(func(o *policyv1.PodDisruptionBudget) *metav1.ObjectMeta {
		return &o.ObjectMeta
	}),
	"monitoring.coreos.com/v1/ServiceMonitor": pair(func(o *monitoringv1.ServiceMonitor) *metav1.ObjectMeta {
		return &o.ObjectMeta
	}),
	"monitoring.coreos.com/v1/PrometheusRule": pair(func(o *monitoringv1.PrometheusRule) *metav1.ObjectMeta {
		return &o.ObjectMeta
	}),
}

// pair makes a constructor of T returning the object and its metadata.
func pair[T any](meta func(*T) *metav1.ObjectMeta) func() (any, *metav1.ObjectMeta) {
	return func() (any, *metav1.ObjectMeta) {
		o := new(T)
		return o, meta(o)
	}
}

var (
	renderOnce sync.Once
	renderings map[string]*rendering
	renderErr  error
)

// renderAll renders the chart with every values set, once per test binary.
func renderAll(t *testing.T) map[string]*rendering {
	t.Helper()
	renderOnce.Do(func() {
		renderings = map[string]*rendering{}
		for name, file := range valuesSets {
			r, err := render(file)
			if err != nil {
				renderErr = fmt.Errorf("values %s: %w", name, err)
				return
			}
			renderings[name] = r
		}
	})
	if renderErr != nil {
		t.Fatal(renderErr)
	}
	return renderings
}

// render renders the chart as `helm install` does (values checked against
// values.schema.json, hooks apart), with missing values an error, and
// decodes every object strictly.
func render(valuesFile string) (*rendering, error) {
	vals := chartutil.Values{}
	if valuesFile != "" {
		var err error
		if vals, err = chartutil.ReadValuesFile(valuesFile); err != nil {
			return nil, err
		}
	}
	return renderValues(vals)
}

// renderValues renders the chart with vals over its defaults.
func renderValues(vals chartutil.Values) (*rendering, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	if !chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, minKube) {
		return nil, fmt.Errorf("kubeVersion %q excludes %s", chrt.Metadata.KubeVersion, minKube)
	}
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(chrt, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(chrt, top)
	if err != nil {
		return nil, err
	}
	r := &rendering{values: top["Values"].(chartutil.Values)}
	r.notes = files[filepath.Join(chrt.Name(), "templates", "NOTES.txt")]
	delete(files, filepath.Join(chrt.Name(), "templates", "NOTES.txt"))
	r.objects, err = decodeAll(chrt, files)
	return r, err
}

// decodeAll sorts the rendered files into hooks and manifests as Helm does
// and decodes each.
func decodeAll(chrt *chart.Chart, files map[string]string) ([]object, error) {
	hooks, manifests, err := releaseutil.SortManifests(files, chartutil.DefaultVersionSet, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	var objs []object
	add := func(source, content string, hook bool) error {
		o, err := decode(content)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		o.source, o.hook = source, hook
		objs = append(objs, o)
		return nil
	}
	for _, h := range hooks {
		if err := add(h.Path, h.Manifest, true); err != nil {
			return nil, err
		}
	}
	for _, m := range manifests {
		if err := add(m.Name, m.Content, false); err != nil {
			return nil, err
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("chart %s rendered no object", chrt.Name())
	}
	return objs, nil
}

// decode reads one manifest into its API type; an unknown kind, an unknown
// or duplicate field, or a value of the wrong type is an error.
func decode(content string) (object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(content), &tm); err != nil {
		return object{}, err
	}
	key := tm.APIVersion + "/" + tm.Kind
	mk, ok := newObject[key]
	if !ok {
		return object{}, fmt.Errorf("%s: a kind the tests do not know how to validate", key)
	}
	obj, meta := mk()
	if err := yaml.UnmarshalStrict([]byte(content), obj); err != nil {
		return object{}, fmt.Errorf("%s: %w", key, err)
	}
	if strings.TrimSpace(meta.Name) == "" {
		return object{}, fmt.Errorf("%s without a name", key)
	}
	return object{kind: tm.Kind, raw: content, meta: meta, obj: obj}, nil
}

// all returns the rendered objects of type T.
func all[T any](r *rendering) []*T {
	var out []*T
	for _, o := range r.objects {
		if v, ok := o.obj.(*T); ok {
			out = append(out, v)
		}
	}
	return out
}

// named returns the rendered object of type T with that name, or nil.
func named[T any](r *rendering, name string) *T {
	for _, o := range r.objects {
		if v, ok := o.obj.(*T); ok && o.meta.Name == name {
			return v
		}
	}
	return nil
}
