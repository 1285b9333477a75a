package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
	"github.com/sdods/sdods/impl/server/datasets"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// pngOf encodes a 32×32 image, white with a red square at x.
func pngOf(t *testing.T, x int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for dy := 0; dy < 8; dy++ {
		for dx := 0; dx < 8; dx++ {
			img.Set(x+dx, 4+dy, color.NRGBA{R: 0xff, A: 0xff})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// TestCompareIsACachedResult is issue 17 item 13's diff written by a GET, refused: the diff
// image of GET /api/artifacts/compare is a content-addressed cache entry, so comparing the same
// two images with the same options again — sequentially or twelve times at once — returns the
// same artifact and adds no row; other options give another entry.
func TestCompareIsACachedResult(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)
	token := apptest.Token(t, admin, "runs:ingest", "runs:read", "runs:write", "artifacts:read")
	embeddings := []map[string]string{{"mime_type": "image/png", "name": "a.png", "data": pngOf(t, 2)}, {"mime_type": "image/png", "name": "b.png", "data": pngOf(t, 12)}}
	doc, _ := json.Marshal([]any{map[string]any{"uri": "features/x.feature", "id": "x", "keyword": "Feature", "name": "X", "line": 1,
		"elements": []any{map[string]any{"id": "x;y", "keyword": "Scenario", "type": "scenario", "name": "Y", "line": 2,
			"steps": []any{map[string]any{"keyword": "Given ", "name": "a page", "line": 3, "result": map[string]any{"status": "passed", "duration": 1000}, "embeddings": embeddings}}}}}})
	id := ingestRun(t, s.Bearer(t, token))
	if status, _, body := ingestDoc(t, s, token, id, "application/json", doc); status != http.StatusOK {
		t.Fatalf("ingest: %d %s", status, body)
	}
	atts := scenariosOf(t, admin, id)[0].Steps[0].Attachments
	if len(atts) != 2 {
		t.Fatalf("attachments %+v", atts)
	}
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	diffRows := func() int {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE kind = 'diff' AND run_id IS NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	compare := func(threshold *float32) uuid.UUID {
		r, err := admin.CompareArtifactsWithResponse(ctx, &serverclient.CompareArtifactsParams{Before: atts[0].ArtifactId, After: atts[1].ArtifactId, Threshold: threshold})
		if err != nil || r.JSON200 == nil || r.JSON200.MismatchPixels != 128 {
			t.Errorf("compare: %v %d %s", err, r.StatusCode(), r.Body)
			return uuid.Nil
		}
		return r.JSON200.DiffArtifactId
	}
	// Twelve at once first: a check-then-insert would race into several rows.
	var wg sync.WaitGroup
	ids := make([]uuid.UUID, 12)
	for i := range ids {
		wg.Add(1)
		go func() { defer wg.Done(); ids[i] = compare(nil) }()
	}
	wg.Wait()
	first := ids[0]
	for _, got := range ids {
		if got != first {
			t.Fatalf("concurrent comparisons: %v", ids)
		}
	}
	if again := compare(nil); again != first || diffRows() != 1 {
		t.Fatalf("the same comparison again: %s then %s, %d diff rows", first, again, diffRows())
	}
	if other := compare(ptr(float32(0.3))); other == first || diffRows() != 2 {
		t.Fatalf("another threshold: %s (the default's %s), %d diff rows", other, first, diffRows())
	}
	if st, body, h := s.Do(t, "GET", "/api/artifacts/"+first.String(), "", nil, "Authorization", "Bearer "+token); st != 200 || h.Get("Content-Type") != "image/png" || !bytes.HasPrefix(body, []byte("\x89PNG")) {
		t.Fatalf("the diff image: %d %v", st, h)
	}
}

// TestDatasetShapeIsLimited is issue 17 item 13's 1.5-million-column CSV, refused: a dataset
// may have at most datasets.MaxColumns columns and cells of at most datasets.MaxCellBytes bytes,
// in CSV and JSON alike, with a 400 that says so; a dataset at the limits is accepted.
func TestDatasetShapeIsLimited(t *testing.T) {
	s := apptest.StartOn(t, storetest.NewDatabase(t), func(c *app.Config) { c.MaxBody, c.MaxDataset = 32<<20, 32<<20 })
	ctx := context.Background()
	admin := s.Setup(t)
	project(t, admin, "http://127.0.0.1:9", nil)

	header := func(n int) string {
		names := make([]string, n)
		for i := range names {
			names[i] = "c" + strconv.FormatInt(int64(i), 36)
		}
		return strings.Join(names, ",")
	}
	wide := header(1_500_000) + "\n"
	bigCell := "a,b\n1," + strings.Repeat("x", datasets.MaxCellBytes+1) + "\n"
	var jsonWide strings.Builder
	jsonWide.WriteString("[{")
	for i := 0; i <= datasets.MaxColumns; i++ {
		if i > 0 {
			jsonWide.WriteString(",")
		}
		jsonWide.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	jsonWide.WriteString("}]")
	for name, c := range map[string]struct {
		file, content, want string
	}{
		"1.5 million columns":   {"wide.csv", wide, "more than 256 columns"},
		"257 columns":           {"wide257.csv", header(257) + "\n", "more than 256 columns"},
		"a cell over the limit": {"cell.csv", bigCell, "at most 65536 bytes"},
		"JSON, 257 members":     {"wide.json", jsonWide.String(), "more than 256 columns"},
		"JSON, a large string":  {"cell.json", `[{"a":"` + strings.Repeat("y", datasets.MaxCellBytes+1) + `"}]`, "at most 65536 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			ct, body := multipartBody(t, c.file, []byte(c.content))
			r, err := admin.UploadDatasetWithBodyWithResponse(ctx, "shop", ct, body)
			if err != nil || r.StatusCode() != http.StatusBadRequest || !strings.Contains(string(r.Body), c.want) || !strings.Contains(string(r.Body), `"validation_failed"`) {
				t.Fatalf("%v %d %.300s", err, r.StatusCode(), r.Body)
			}
		})
	}
	ct, body := multipartBody(t, "limits.csv", []byte(header(datasets.MaxColumns)+"\n"+strings.Repeat("z", datasets.MaxCellBytes)+strings.Repeat(",1", datasets.MaxColumns-1)+"\n"))
	if r, err := admin.UploadDatasetWithBodyWithResponse(ctx, "shop", ct, body); err != nil || r.JSON201 == nil || len(r.JSON201.Columns) != datasets.MaxColumns {
		t.Fatalf("at the limits: %v %d %.300s", err, r.StatusCode(), r.Body)
	}
}
