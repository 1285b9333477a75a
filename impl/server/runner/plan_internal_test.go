package runner

import (
	"reflect"
	"testing"
)

// A Runner's plan cache gives every run what planning afresh gives it, whatever the run's tag
// expression, quarantine list and datasets, and one run's scenarios share nothing a run may
// change with another's.
func TestPlanCacheSameAsPlanningAfresh(t *testing.T) {
	features := map[string]string{
		"shop/items.feature": `@shop
Feature: Items
  Background:
    Given the base URL is "http://example.com"

  @smoke @user:admin
  Scenario: List
    When I send a GET request to "/items"
    Then the response status is 200

  Scenario Outline: One <n>
    When I send a GET request to "/items/<n>"
    Then the response JSON at "$.id" is "<n>"

    @wip
    Examples:
      | n |
      | 1 |
      | 2 |

  Rule: Writes
    @slow
    Scenario: Create
      When I send a POST request to "/items" with the body:
        """json
        {"name": "x"}
        """
      Then the response status is 201
`,
		"shop/fed.feature": `Feature: Fed
  Scenario Outline: Row <a>
    When I set "a" to "<a>"

    @dataset:people
    Examples:
      | a |
`,
		"broken.feature":      "Feature: Broken\n  Scenario: A\n    Given I set \"x\" to \"1\"\nFeature: Again\n",
		"other/plain.feature": "Feature: Plain\n  Scenario: P\n    When I set \"x\" to \"1\"\n",
	}
	quarantineOf := func(path, name string, row int) map[string]bool {
		return map[string]bool{Identity(path, name, row): true}
	}
	runs := []struct {
		tags        string
		quarantined map[string]bool
		datasets    map[string]Dataset
	}{
		{},
		{tags: "@smoke"},
		{tags: "not @quarantined", quarantined: quarantineOf("shop/items.feature", "List", 0)},
		{tags: "@quarantined or @slow", quarantined: quarantineOf("shop/items.feature", "One 2", 0)},
		{datasets: map[string]Dataset{"people": {Columns: []string{"a"}, Rows: [][]string{{"x"}, {"y"}}}}},
		{tags: "@wip and not @quarantined", quarantined: quarantineOf("shop/fed.feature", "Row y", 2),
			datasets: map[string]Dataset{"people": {Columns: []string{"a"}, Rows: [][]string{{"x"}, {"y"}}}}},
		{},
	}
	cache := &planCache{}
	for round := range 2 {
		for i, r := range runs {
			filter, err := ParseTagExpr(r.tags)
			if err != nil {
				t.Fatal(err)
			}
			run := Run{Features: features, Tags: r.tags, Quarantined: r.quarantined, Datasets: r.datasets}
			wantPlan, wantProblems := plan(run, filter, nil)
			gotPlan, gotProblems := plan(run, filter, cache)
			if !reflect.DeepEqual(gotPlan, wantPlan) || !reflect.DeepEqual(gotProblems, wantProblems) {
				t.Fatalf("round %d run %d (%q):\n got %+v %v\nwant %+v %v", round, i, r.tags, gotPlan, gotProblems, wantPlan, wantProblems)
			}
			if len(wantPlan) == 0 {
				t.Fatalf("run %d plans nothing: the case tests nothing", i)
			}
			// What a run may change of its plan is its own.
			for j := range gotPlan {
				if len(gotPlan[j].ref.Tags) > 0 {
					gotPlan[j].ref.Tags[0] = "@changed"
				}
				if gotPlan[j].ref.Example != nil {
					gotPlan[j].ref.Example["n"] = "changed"
				}
			}
		}
	}
	if len(cache.m) != len(features) {
		t.Fatalf("%d features kept, want %d", len(cache.m), len(features))
	}
	fresh := 0
	for _, f := range cache.m {
		if f.fresh {
			fresh++
		}
	}
	if fresh != 2 {
		t.Fatalf("%d features planned afresh each run, want 2 (the dataset's and the broken one)", fresh)
	}
}
