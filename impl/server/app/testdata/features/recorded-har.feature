@recorded @http
Feature: Cart API

  Scenario: Cart API
    Given I set the header "Accept" to "application/json"
    When I send a POST request to "https://shop.example.com/api/cart"
      """
      {"sku":"A1"}
      """
    Then the response status is 201
    Given I set the header "Accept" to "application/json"
    When I send a GET request to "https://shop.example.com/api/cart"
    Then the response status is 200
