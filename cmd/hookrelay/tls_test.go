package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/eventgrid/azeventgrid"

	"github.com/hookrelay/hookrelay/config"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSSettingsChecked: a certificate without its key, or a key without
// its certificate, stops start-up naming both settings; files that do not
// hold a certificate and key stop `hookrelay api` before it connects to
// anything, naming the setting.
func TestTLSSettingsChecked(t *testing.T) {
	t.Parallel()
	admin := strings.Repeat("k", config.MinAdminKeyLength)
	for _, e := range []map[string]string{{config.EnvTLSCert: "c.pem"}, {config.EnvTLSKey: "k.pem"}} {
		e[config.EnvAdminKey] = admin
		err := run(context.Background(), []string{"api"}, env(e), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), config.EnvTLSCert) || !strings.Contains(err.Error(), config.EnvTLSKey) {
			t.Errorf("%v: %v", e, err)
		}
	}
	dir := t.TempDir()
	certFile, _, _ := selfSigned(t, dir)
	err := run(context.Background(), []string{"api"}, env(map[string]string{config.EnvAdminKey: admin,
		config.EnvTLSCert: certFile, config.EnvTLSKey: filepath.Join(dir, "missing.pem")}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), config.EnvTLSKey) || strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("missing key file: %v", err)
	}
}

// TestAPIServesTLS: `hookrelay api` in production mode with
// HOOKRELAY_TLS_CERT and HOOKRELAY_TLS_KEY serves HTTPS on its own
// address: `hookrelay healthcheck api` reaches it; an account's API key,
// made with the admin key, publishes through Azure's Event Grid SDK, which
// sends credentials over TLS only.
func TestAPIServesTLS(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	admin := strings.Repeat("a", config.MinAdminKeyLength)
	e, addr := setUpAPI(ctx, t, "tls", map[string]string{
		config.EnvAdminKey: admin, config.EnvTLSCert: certFile, config.EnvTLSKey: keyFile, "HOOKRELAY_API_WORKER": "false"})
	apiCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(apiCtx, []string{"api"}, e, io.Discard, io.Discard) }()
	defer func() { stop(); <-done }()
	var out bytes.Buffer
	for run(ctx, []string{"healthcheck", "api"}, e, &out, io.Discard) != nil {
		if ctx.Err() != nil {
			t.Fatal("`hookrelay healthcheck api` never reached the API over TLS")
		}
		time.Sleep(100 * time.Millisecond)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + addr
	acct := postAdmin(t, hc, base+"/accounts", admin, `{"name":"tls"}`)
	key := postAdmin(t, hc, base+"/v1/accounts/"+acct["id"]+"/keys", admin, `{"name":"azure"}`)
	client, err := azeventgrid.NewClientWithSharedKeyCredential(base+"/eventgrid/events", azcore.NewKeyCredential(key["key"]),
		&azeventgrid.ClientOptions{ClientOptions: policy.ClientOptions{Transport: hc}})
	if err != nil {
		t.Fatal(err)
	}
	id, typ, subject, version, at := "tls-1", "order.created", "/orders/1", "1.0", time.Now()
	_, err = client.PublishEvents(ctx, []azeventgrid.Event{{ID: &id, EventType: &typ, Subject: &subject,
		DataVersion: &version, EventTime: &at, Data: map[string]int{"n": 1}}}, nil)
	if err != nil {
		t.Fatalf("PublishEvents over the API's own TLS: %v", err)
	}
}

// postAdmin POSTs body with the admin key and returns the answer's strings.
func postAdmin(t *testing.T, hc *http.Client, url, admin, body string) map[string]string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %s %v", url, resp.Status, out)
	}
	strs := map[string]string{}
	for k, v := range out {
		strs[k], _ = v.(string)
	}
	return strs
}
