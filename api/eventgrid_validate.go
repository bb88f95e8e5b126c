package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
)

// validatePath is the route of Event Grid's validationUrl: a capability URL,
// whose code is its credential, so it is public (no Authorization header).
const validatePath = "/eventgrid/validate/:id"

// validateByHand validates an Event Grid subscription on a GET of the
// validationUrl its handshake sent (docs/policies.md#eventgrid), for endpoints
// that cannot echo the code: while that handshake is pending (not once it
// failed) and for eventgrid.ValidationURLLifetime from the send of the
// validation event (eventgrid.Settings.ValidationURLWorks). Anything else is
// a 404 that says nothing of the subscription.
func (s *Server) validateByHand(c echo.Context) error {
	ctx := c.Request().Context()
	code := c.QueryParam("code")
	notFound := &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no handshake awaits this validation URL"}
	sub, err := s.Store.SubscriptionByID(ctx, c.Param("id"))
	if err != nil {
		return notFound
	}
	eg := eventgrid.Of(sub.Options)
	if !eg.ValidationURLWorks(time.Now()) || code == "" || !sameSecret(code, eg.ValidationCode) {
		return notFound
	}
	ok, err := s.Store.SetEventGridValidation(ctx, sub.ID, code, eventgrid.ValidationSucceeded)
	if err != nil {
		return err
	}
	if ok {
		s.startWaiting(ctx, sub.ID)
	}
	return c.JSON(http.StatusOK, map[string]any{"validated": true, "subscription_id": sub.ID})
}

// withoutValidationCode is a subscription's options without its Event Grid
// validation code: the code is the validation URL's credential, which only
// the receiver is to learn (from the handshake). Shown to the account, it
// would let the account validate a URL whose receiver never agreed.
func withoutValidationCode(options store.RawJSON) store.RawJSON {
	eg := eventgrid.Of(options)
	if eg == nil || eg.ValidationCode == "" {
		return options
	}
	eg.ValidationCode = ""
	return eventgrid.Options(*eg)
}
