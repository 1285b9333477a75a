package agents

import "testing"

func TestUnifiedDiff(t *testing.T) {
	before := "Feature: F\n  Scenario: S\n    When I open \"/\"\n    And I click \"#a\"\n    Then I should see \"x\"\n"
	replaced := "Feature: F\n  Scenario: S\n    When I open \"/\"\n    And I click \"#b\"\n    Then I should see \"x\"\n"
	if got, want := UnifiedDiff("f.feature", before, replaced), "--- a/f.feature\n+++ b/f.feature\n@@ -1,6 +1,6 @@\n Feature: F\n   Scenario: S\n     When I open \"/\"\n-    And I click \"#a\"\n+    And I click \"#b\"\n     Then I should see \"x\"\n \n"; got != want {
		t.Fatalf("replace:\n%s", got)
	}
	inserted, ok := insertWait(before, `I click "#a"`, "#a")
	if !ok {
		t.Fatal("no insertion")
	}
	if got, want := UnifiedDiff("f.feature", before, inserted), "--- a/f.feature\n+++ b/f.feature\n@@ -1,6 +1,7 @@\n Feature: F\n   Scenario: S\n     When I open \"/\"\n+    And I wait for \"#a\"\n     And I click \"#a\"\n     Then I should see \"x\"\n \n"; got != want {
		t.Fatalf("insert:\n%s", got)
	}
	long := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16"
	changed := "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\nY\n16"
	if got, want := UnifiedDiff("n", long, changed), "--- a/n\n+++ b/n\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -12,5 +12,5 @@\n 12\n 13\n 14\n-15\n+Y\n 16\n"; got != want {
		t.Fatalf("two hunks:\n%s", got)
	}
}
