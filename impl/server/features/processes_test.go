package features_test

import (
	"context"
	"testing"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/features"
)

func TestProcessInUseIsNotDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, p := mustProject(t)
	svc := features.NewService(st, nil)
	signIn := "Given I open \"/login\"\n"
	if _, err := svc.CreateProcess(ctx, p, "sign in", "", signIn, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateProcess(ctx, p, "sign in", "", signIn, nil); code(err) != apierr.Conflict {
		t.Fatalf("a name twice: %v", err)
	}
	caller := "Feature: Cart\n\n  Scenario: Buy\n    When " + features.ProcessStepText("sign in") + "\n"
	if _, err := svc.Save(ctx, p, "cart.feature", caller, nil); err != nil {
		t.Fatal(err)
	}
	usage, err := svc.StepUsage(ctx, p)
	if err != nil || usage["process:sign in"] != 1 {
		t.Fatalf("usage: %v %v", usage, err)
	}
	if err := svc.DeleteProcess(ctx, p, "sign in"); code(err) != apierr.Conflict {
		t.Fatalf("delete a called process: %v", err)
	}
	if err := svc.Delete(ctx, p, "cart.feature", nil); err != nil {
		t.Fatal(err)
	}
	updated, err := svc.UpdateProcess(ctx, p, "sign in", "signs in", signIn+"Then I see \"Welcome\"\n", nil)
	if err != nil || updated.Description != "signs in" || updated.Parameters == nil {
		t.Fatalf("update: %+v %v", updated, err)
	}
	if err := svc.DeleteProcess(ctx, p, "sign in"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetProcess(ctx, p.ID, "sign in"); code(err) != apierr.NotFound {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := svc.UpdateProcess(ctx, p, "sign in", "", signIn, nil); code(err) != apierr.NotFound {
		t.Fatalf("update a deleted process: %v", err)
	}
}
