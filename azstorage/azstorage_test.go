package azstorage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hookrelay/hookrelay/azstorage"
	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/testenv"
)

// TestPutOnce: against Azurite, the first put creates the container and the
// blob; a second put of the same name writes nothing and keeps the first
// content; an account without credentials is ErrNoCredentials.
func TestPutOnce(t *testing.T) {
	t.Parallel()
	acc := testenv.StorageAccounts(t, testenv.Azurite(t))
	ctx := context.Background()
	first, err := acc.PutOnce(ctx, devenv.AzuriteAccount, "dlq", "SUB/2026/1/2/3/a.json", []byte(`[1]`))
	if err != nil || !first.Created || first.URL == "" {
		t.Fatalf("first put: %+v, %v", first, err)
	}
	again, err := acc.PutOnce(ctx, devenv.AzuriteAccount, "dlq", "SUB/2026/1/2/3/a.json", []byte(`[2]`))
	if err != nil || again.Created || again.URL != first.URL {
		t.Fatalf("second put: %+v, %v; want the first blob, not written again", again, err)
	}
	r, err := acc.Client(devenv.AzuriteAccount).DownloadStream(ctx, "dlq", "SUB/2026/1/2/3/a.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.ContentLength == nil || *r.ContentLength != 3 || r.ContentType == nil || *r.ContentType != "application/json" {
		t.Errorf("blob: length %v, type %v; want the first 3 bytes of JSON", r.ContentLength, r.ContentType)
	}
	if _, err := acc.PutOnce(ctx, "other", "dlq", "x.json", nil); !errors.Is(err, azstorage.ErrNoCredentials) {
		t.Errorf("other account: %v, want ErrNoCredentials", err)
	}
}

// TestAccounts: accounts are named by their connection strings' AccountName;
// one without is refused.
func TestAccounts(t *testing.T) {
	acc, err := azstorage.New([]string{"AccountName=one;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/one"}, nil)
	if err != nil || !acc.Has("one") || acc.Has("two") {
		t.Fatalf("accounts: %v, has one %v", err, acc.Has("one"))
	}
	if _, err := azstorage.New([]string{"BlobEndpoint=http://127.0.0.1:1/x"}, nil); err == nil {
		t.Error("a connection string without AccountName was taken")
	}
	var none *azstorage.Accounts
	if none.Has("one") {
		t.Error("nil accounts have one")
	}
}
