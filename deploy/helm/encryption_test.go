package helm_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/secrets"
)

// userKeyRing stands in for the key ring in encryption.existingSecret.
var userKeyRing = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// keysFile points env's HOOKRELAY_ENCRYPTION_KEYS_FILE, if set, at a copy of
// the file the container would read there: the key of a Secret mounted on
// the file's folder (the chart's own, or the user's standing in as
// userKeyRing). A file in no mounted Secret fails the test.
func keysFile(t *testing.T, r *rendering, pod corev1.PodSpec, c corev1.Container, env map[string]string) {
	t.Helper()
	path := env[config.EnvEncryptionKeysFile]
	if path == "" {
		return
	}
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return filepath.Dir(path) == m.MountPath })
	if i < 0 {
		t.Fatalf("%s: %s is in no mounted volume", c.Name, path)
	}
	v := pod.Volumes[slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })]
	text := userKeyRing
	if s := named[corev1.Secret](r, v.Secret.SecretName); s != nil {
		text = string(s.Data[filepath.Base(path)])
	}
	copied := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(copied, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env[config.EnvEncryptionKeysFile] = copied
}

// TestEncryptionKeyRing: the API and the workers read the key ring from a
// mounted Secret, the chart's own (a 32-byte key it made, kept when the
// release is uninstalled) or encryption.existingSecret (then the chart
// makes none); the setup Job needs none.
func TestEncryptionKeyRing(t *testing.T) {
	for name, r := range renderAll(t) {
		existing, _ := r.values.PathValue("encryption.existingSecret")
		own := named[corev1.Secret](r, release+"-encryption")
		if (own != nil) != (existing == "") {
			t.Errorf("values %s: existingSecret %q, the chart's own Secret: %v", name, existing, own != nil)
		}
		if own != nil {
			ring, err := secrets.ParseRing(string(own.Data["keys"]))
			if err != nil || len(ring.IDs()) != 1 || own.Annotations["helm.sh/resource-policy"] != "keep" {
				t.Errorf("values %s: the chart's key ring: %v, %v, annotations %v", name, ring.IDs(), err, own.Annotations)
			}
		}
		for _, w := range workloads(r) {
			env := containerEnv(t, r, w.pod.Spec.Containers[0])
			wants := !strings.HasSuffix(w.name, "-setup")
			if has := env[config.EnvEncryptionKeysFile] != ""; has != wants {
				t.Errorf("values %s: %s reads a key ring: %v", name, w.name, has)
			}
		}
	}
}
