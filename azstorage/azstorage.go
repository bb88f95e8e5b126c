// Package azstorage writes blobs to Azure Blob Storage (Azure's, or the
// Azurite emulator) with Azure's Go SDK, for the storage accounts hookrelay
// has credentials for: connection strings, or Microsoft Entra ID through
// azidentity.DefaultAzureCredential (docs/eventgrid.md#dead-letters-in-azure-blob-storage).
package azstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// ErrNoCredentials is returned for a storage account hookrelay has no
// credentials for.
var ErrNoCredentials = errors.New("azstorage: no credentials for the storage account")

// Accounts are the storage accounts hookrelay can write to, by name. The zero
// value (or nil) has none.
type Accounts struct {
	clients map[string]*azblob.Client
}

// clientOptions leave retrying to the caller (a Temporal activity's retry
// policy): one try, bounded.
func clientOptions() *azblob.ClientOptions {
	return &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: 30 * time.Second},
	}}
}

// New makes the accounts of connection strings (each naming its AccountName)
// and of the account names reached with Microsoft Entra ID
// (azidentity.DefaultAzureCredential, at https://<name>.blob.core.windows.net/).
// A connection string takes precedence over Entra ID for the same account.
func New(connectionStrings, entraAccounts []string) (*Accounts, error) {
	a := &Accounts{clients: map[string]*azblob.Client{}}
	if len(entraAccounts) > 0 {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("azstorage: Entra ID credential: %w", err)
		}
		for _, name := range entraAccounts {
			c, err := azblob.NewClient("https://"+name+".blob.core.windows.net/", cred, clientOptions())
			if err != nil {
				return nil, fmt.Errorf("azstorage: account %s: %w", name, err)
			}
			a.clients[name] = c
		}
	}
	for _, cs := range connectionStrings {
		name := AccountName(cs)
		if name == "" {
			return nil, errors.New("azstorage: a connection string names no AccountName")
		}
		c, err := azblob.NewClientFromConnectionString(cs, clientOptions())
		if err != nil {
			return nil, fmt.Errorf("azstorage: connection string of %s: %w", name, err)
		}
		a.clients[name] = c
	}
	return a, nil
}

// AccountName is the AccountName a connection string names, "" for none.
func AccountName(connectionString string) string {
	for _, part := range strings.Split(connectionString, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && strings.EqualFold(k, "AccountName") {
			return v
		}
	}
	return ""
}

// Has tells whether hookrelay has credentials for the account.
func (a *Accounts) Has(account string) bool {
	return a != nil && a.clients[account] != nil
}

// Blob is a blob written.
type Blob struct {
	URL string
	// Created is false when the blob was there already (written before).
	Created bool
}

// PutOnce writes body as the block blob container/name (PutBlob, JSON),
// creating the container if it is missing, unless a blob of that name
// exists: a blob is written once however often this is called.
func (a *Accounts) PutOnce(ctx context.Context, account, container, name string, body []byte) (Blob, error) {
	if !a.Has(account) {
		return Blob{}, fmt.Errorf("%w %q", ErrNoCredentials, account)
	}
	cc := a.clients[account].ServiceClient().NewContainerClient(container)
	bc := cc.NewBlockBlobClient(name)
	err := upload(ctx, bc, body)
	if bloberror.HasCode(err, bloberror.ContainerNotFound) {
		if _, cerr := cc.Create(ctx, nil); cerr != nil && !bloberror.HasCode(cerr, bloberror.ContainerAlreadyExists) {
			return Blob{}, fmt.Errorf("azstorage: create container %s/%s: %w", account, container, cerr)
		}
		err = upload(ctx, bc, body)
	}
	blobURL := cc.URL() + "/" + escapePath(name)
	switch {
	case bloberror.HasCode(err, bloberror.BlobAlreadyExists):
		return Blob{URL: blobURL}, nil
	case err != nil:
		return Blob{}, fmt.Errorf("azstorage: put %s/%s/%s: %w", account, container, name, err)
	}
	return Blob{URL: blobURL, Created: true}, nil
}

// escapePath escapes each segment of a blob name, keeping its slashes, as
// Azure Storage's own blob URLs read.
func escapePath(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// upload puts body unless the blob exists (If-None-Match: *).
func upload(ctx context.Context, bc *blockblob.Client, body []byte) error {
	_, err := bc.Upload(ctx, streaming.NopCloser(bytes.NewReader(body)), &blockblob.UploadOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("application/json")},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfNoneMatch: to.Ptr(azcore.ETagAny)}},
	})
	return err
}

// Client is the SDK's client of an account, nil without credentials (for
// reading back in tests and tools).
func (a *Accounts) Client(account string) *azblob.Client {
	if a == nil {
		return nil
	}
	return a.clients[account]
}
