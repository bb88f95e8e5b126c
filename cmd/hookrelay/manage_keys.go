package main

import (
	hookrelay "github.com/hookrelay/hookrelay/client"
)

// keysCmd is `hookrelay keys …`: HOOKRELAY_API_KEY must be the admin key.
type keysCmd struct {
	List   keysListCmd   `cmd:"" help:"List an account's API keys, revoked ones included."`
	Create keysCreateCmd `cmd:"" help:"Make an API key for an account (prints the key, shown only here)."`
	Revoke keysRevokeCmd `cmd:"" help:"Revoke an API key: it stops working at once."`
}

// keyTable writes API keys, one a line.
func keyTable(t *table, keys []hookrelay.APIKey) {
	t.row("ID", "NAME", "ACCOUNT", "CREATED", "REVOKED")
	for _, k := range keys {
		t.row(k.ID, k.Name, k.AccountID, k.CreatedAt, k.RevokedAt)
	}
}

type keysListCmd struct {
	output
	Account string `arg:"" help:"The account's id (acct_default in open mode)."`
}

// Run lists the account's keys.
func (c *keysListCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.ListKeysResponse) {
		keyTable(t, r.JSON200.Keys)
	})(api.ListKeysWithResponse(e.ctx, c.Account))
}

type keysCreateCmd struct {
	output
	Account string `arg:"" help:"The account's id."`
	Name    string `required:"" placeholder:"NAME" help:"What the key is for."`
}

// Run makes a key.
func (c *keysCreateCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.CreateKeyResponse) {
		t.row("id", r.JSON201.ID)
		t.row("name", r.JSON201.Name)
		t.row("account_id", r.JSON201.AccountID)
		t.row("key", r.JSON201.Key)
		if k := r.JSON201.EventgridSasKey; k != nil {
			t.row("eventgrid_sas_key", *k)
		}
	})(api.CreateKeyWithResponse(e.ctx, c.Account, hookrelay.NameRequest{Name: c.Name}))
}

type keysRevokeCmd struct {
	output
	Account string `arg:"" help:"The account's id."`
	KeyID   string `arg:"" name:"key-id" help:"The key's id."`
}

// Run revokes the key.
func (c *keysRevokeCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.RevokeKeyResponse) {
		keyTable(t, []hookrelay.APIKey{*r.JSON200})
	})(api.RevokeKeyWithResponse(e.ctx, c.Account, c.KeyID))
}
