package dev.sdods.rules;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small benchmark harness (no JMH, which Maven Central would have to supply): the five fixtures'
 * evaluations (the golden requests of conformance/fixtures/NAME/evaluations.json, parsed once, as
 * Go's BenchmarkFixtureEvaluation does) and the four expression cases of engine/bench_test.go.
 * Each case is warmed up (the JIT compiles the hot paths), then timed in several windows of
 * process CPU time; the median CPU ns per operation is printed as "BenchJava/CASE ns/op".
 *
 * Usage: java -cp CLASSES dev.sdods.rules.Bench ROOT [warm-up CPU seconds] [windows] [window CPU seconds] [case filter]
 */
public final class Bench {
    private Bench() {}

    static volatile int sink;

    interface Op {
        Object run() throws Exception;
    }

    /** CPU time of the whole process (every thread: the collector's work and the JIT's count). */
    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    /**
     * Warms op up for warmSeconds of CPU time (on a shared machine wall time says little about
     * how much the JIT could do), then returns the median over windows of the CPU time per
     * operation, each window at least windowSeconds of CPU time.
     */
    static double measure(Op op, double warmSeconds, int windows, double windowSeconds) throws Exception {
        long end = cpu() + (long) (warmSeconds * 1e9);
        int h = 0;
        while (cpu() < end) {
            for (int k = 0; k < 1000; k++) {
                h += System.identityHashCode(op.run());
            }
        }
        double[] ns = new double[windows];
        for (int w = 0; w < windows; w++) {
            long n = 0;
            long start = cpu();
            long stop = start + (long) (windowSeconds * 1e9);
            long now;
            do {
                for (int k = 0; k < 1000; k++) {
                    h += System.identityHashCode(op.run());
                }
                n += 1000;
                now = cpu();
            } while (now < stop);
            ns[w] = (double) (now - start) / n;
        }
        sink = h;
        Arrays.sort(ns);
        return ns[windows / 2];
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : ".");
        double warm = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        int windows = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        double window = args.length > 3 ? Double.parseDouble(args[3]) : 1;
        Map<String, Op> cases = new LinkedHashMap<>();
        for (String f : new String[] {"signup", "addressbook", "loan", "checkout", "insurance"}) {
            Path dir = root.resolve("conformance/fixtures/" + f);
            Map<?, ?> ev = (Map<?, ?>) Json.parse(Files.readString(dir.resolve("evaluations.json"), StandardCharsets.UTF_8));
            RuleSet rs = RuleSet.fromBundle(Files.readString(dir.resolve((String) ev.get("bundle")), StandardCharsets.UTF_8));
            Map<String, CustomOperator> ops = new LinkedHashMap<>();
            for (Object o : (List<?>) ev.get("operators")) {
                ops.put((String) o, SuiteOperators.all().get(o));
            }
            RuleSet loaded = rs.withOperators(ops);
            List<Request> reqs = new ArrayList<>();
            List<String> chans = new ArrayList<>();
            for (Object t : (List<?>) ev.get("tests")) {
                Map<?, ?> tc = (Map<?, ?>) t;
                reqs.add(Request.fromJson(tc.get("request")));
                chans.add(tc.get("channel") == null ? "server" : (String) tc.get("channel"));
            }
            int[] i = {0};
            cases.put("FixtureEvaluation/" + f, () -> {
                int k = i[0]++ % reqs.size();
                Request r = reqs.get(k);
                return loaded.evaluate(r, r.view, r.locale, chans.get(k));
            });
        }
        cases.put("Boolean", expression("{\"op\":\"and\",\"args\":["
            + "{\"op\":\"or\",\"args\":[{\"op\":\"==\",\"args\":[{\"var\":\"data.Origin\"},\"MOW\"]},{\"op\":\"==\",\"args\":[{\"var\":\"data.Country\"},\"RU\"]}]},"
            + "{\"op\":\"or\",\"args\":[{\"op\":\">=\",\"args\":[{\"var\":\"data.Value\"},100]},{\"op\":\"==\",\"args\":[{\"var\":\"data.Adults\"},1]}]}]}",
            "{\"data\":{\"Origin\":\"MOW\",\"Country\":\"RU\",\"Adults\":1,\"Value\":100}}", Map.of()));
        cases.put("StartsWith", expression("{\"op\":\"startsWith\",\"args\":[{\"var\":\"data.name\"},\"/groups/\"]}",
            "{\"data\":{\"name\":\"/groups/foo/bar\"}}", Map.of()));
        cases.put("FunctionCall", expression("{\"op\":\"x-join\",\"args\":[{\"var\":\"data.a\"},{\"var\":\"data.b\"}]}",
            "{\"data\":{\"a\":\"hello\",\"b\":\"world\"}}", Map.of("x-join", a -> (String) a.get(0) + a.get(1))));
        StringBuilder arr = new StringBuilder("[");
        for (int k = 0; k < 100; k++) {
            arr.append(k == 0 ? "" : ",").append(k);
        }
        cases.put("Map100", expression("{\"op\":\"map\",\"args\":[{\"var\":\"data.arr\"},{\"op\":\"*\",\"args\":[{\"var\":\"it\"},2]}]}",
            "{\"data\":{\"arr\":" + arr + "]}}", Map.of()));
        String only = args.length > 4 ? args[4] : "";
        for (Map.Entry<String, Op> c : cases.entrySet()) {
            if (!c.getKey().contains(only)) {
                continue;
            }
            double ns = measure(c.getValue(), warm, windows, window);
            System.out.printf("BenchJava/%s %.1f ns/op%n", c.getKey(), ns);
        }
    }

    @SuppressWarnings("unchecked")
    static Op expression(String src, String env, Map<String, CustomOperator> ops) throws Exception {
        Expr.Compiler c = new Expr.Compiler(new java.util.TreeSet<>(ops.keySet()));
        Expr.Program p = c.program(Json.parse(src), "");
        if (!c.diags.isEmpty()) {
            throw new IllegalStateException(c.diags.toString());
        }
        Map<String, Object> e = (Map<String, Object>) Json.parse(env);
        Engine.checkEnv(e);
        return () -> p.eval(e, ops, Expr.DEFAULT_BUDGET);
    }
}
