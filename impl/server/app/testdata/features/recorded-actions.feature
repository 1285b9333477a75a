@recorded @browser
Feature: Sign in

  Scenario: Sign in
    Given I open "/login"
    When I fill "#user" with "ada \"the first\""
    And I click "button[type=submit]"
    And I click "#remember"
    Then I wait for ".dashboard"
    And I should see "Welcome"
    And I take a screenshot named "dashboard"
