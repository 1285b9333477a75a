package dev.sdods.rules;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Files of the repository the tests read: the suite's fixtures and the pattern cases. */
final class TestFiles {
    private TestFiles() {}

    /** The repository root: the system property sdods.root, else two levels above the working directory. */
    static Path root() {
        String r = System.getProperty("sdods.root");
        return r != null ? Path.of(r) : Path.of("").toAbsolutePath().getParent().getParent();
    }

    static String read(String rel) throws IOException {
        return Files.readString(root().resolve(rel), StandardCharsets.UTF_8);
    }
}
