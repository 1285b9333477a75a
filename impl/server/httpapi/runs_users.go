package httpapi

import (
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/identity"
)

// toUserSummary shows the user who created a run.
func toUserSummary(u identity.User) serverapi.UserSummary {
	return serverapi.UserSummary{Id: u.ID, Email: openapi_types.Email(u.Email), DisplayName: u.DisplayName}
}
