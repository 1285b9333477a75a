package httpapi_test

import (
	"slices"
	"testing"

	"github.com/sdods/sdods/impl/server/httpapi"
)

func TestParseTrustedProxies(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "10.0.0.1", want: []string{"10.0.0.1/32"}},
		{in: " 10.0.0.0/8 , ::1 ,192.168.1.7/16", want: []string{"10.0.0.0/8", "::1/128", "192.168.0.0/16"}},
		{in: "::ffff:10.0.0.1", want: []string{"10.0.0.1/32"}},
		{in: "10.0.0.0/8,proxy.example.com", wantErr: true},
		{in: "10.0.0.0/33", wantErr: true},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := httpapi.ParseTrustedProxies(c.in)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if !slices.Equal(s, c.want) {
				t.Fatalf("got %v, want %v", s, c.want)
			}
		})
	}
}
