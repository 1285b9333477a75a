package httpapi

import (
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
)

// toUserSummary shows the user who created a run; the runs handlers still read users through
// gen/db until their tag moves to a service.
func toUserSummary(u db.User) serverapi.UserSummary {
	return serverapi.UserSummary{Id: u.ID, Email: openapi_types.Email(u.Email), DisplayName: u.DisplayName}
}
