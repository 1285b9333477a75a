package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NumTest {
    @ParameterizedTest
    @CsvSource({"1.5,1.5", "0.3,0.3", "1e21,1e+21", "1e-7,1e-7", "100000000000000000000,100000000000000000000",
        "0.30000000000000004,0.3", "4.94065645841247e-324,4.94065645841247e-324", "-0.000001,-0.000001",
        "1234567890123445,1234567890123440", "1234567890123455,1234567890123460", "123456789012345,123456789012345",
        "1.5e-7,1.5e-7", "-0,0"})
    void canonicalText(String in, String out) {
        assertEquals(out, Num.text(Double.parseDouble(in) + 0.0));
    }

    @ParameterizedTest
    @CsvSource({"0.1,0.1", "1e21,1e+21", "0.30000000000000004,0.30000000000000004", "5e-324,5e-324",
        "1.7976931348623157e308,1.7976931348623157e+308", "2e23,2e+23", "123.456,123.456"})
    void shortestText(String in, String out) {
        assertEquals(out, Num.shortest(Double.parseDouble(in)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"add|0.1|0.2|0.3", "add|1e15|15|1000000000000020", "mul|1.1|1.1|1.21",
        "mul|0.07|100|7", "div|2|3|0.666666666666667", "div|0.3|0.1|3", "mod|-7|3|-1", "mod|7|-3|1", "mod|5.5|2|1.5",
        "mod|0.3|0.1|0", "add|1e15|1|1000000000000000", "sub|0.3|0.1|0.2"})
    void decimalArithmetic(String op, double a, double b, String want) {
        double r;
        switch (op) {
            case "add": r = Num.add(a, b); break;
            case "sub": r = Num.sub(a, b); break;
            case "mul": r = Num.mul(a, b); break;
            case "div": r = Num.div(a, b); break;
            default: r = Num.mod(a, b);
        }
        assertEquals(want, Num.text(r));
    }

    @ParameterizedTest
    @CsvSource({"2.5,0,3", "-2.5,0,-3", "1.005,2,1.01", "1234.5,-2,1200"})
    void roundTiesAwayFromZero(double x, int places, String want) {
        assertEquals(want, Num.text(Num.round(x, places)));
    }

    @org.junit.jupiter.api.Test
    void beyondRangeOnTheWayOut() {
        assertThrows(Num.RangeException.class, () -> Num.text(1.7976931348623157e308));
        assertThrows(Num.RangeException.class, () -> Num.add(1e308, 1e308));
        assertEquals(null, Num.div(1, 0));
    }
}
