package httpapi

import (
	"context"
	"net/http"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/webui"
)

// GetWebUi serves the web UI's page (index.html of the embedded build, see impl/server/webui).
// Its files and client-side routes are served by webui.Wrap in front of the API.
func (s *Server) GetWebUi(_ context.Context, _ serverapi.GetWebUiRequestObject) (serverapi.GetWebUiResponseObject, error) {
	return webUIPage{}, nil
}

type webUIPage struct{}

func (webUIPage) VisitGetWebUiResponse(w http.ResponseWriter) error {
	webui.WriteIndex(w, nil)
	return nil
}
