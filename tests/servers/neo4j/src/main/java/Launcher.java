import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts an in-process Neo4j (the test harness) for the Python test suite.
 *
 * <p>Usage: {@code java -cp "neo4j-harness-launcher.jar:lib/*" Launcher [port]} (0 or nothing: a
 * free port). Bolt on 127.0.0.1 only, auth off, HTTP off, data in a temp directory removed on exit.
 * When ready, prints exactly one line to stdout, {@code BOLT bolt://127.0.0.1:PORT}; everything
 * else (Neo4j's own output) goes to stderr. Stops when stdin closes (the parent died or is done)
 * or on SIGTERM/SIGINT.
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    PrintStream ready = System.out;
    System.setOut(System.err); // only the BOLT line goes to stdout
    Path home = Files.createTempDirectory("neo4j-harness-");
    AtomicReference<Neo4j> server = new AtomicReference<>();
    // Runs on SIGTERM/SIGINT and on System.exit, also when startup is cut short.
    Thread stop =
        new Thread(
            () -> {
              Neo4j neo4j = server.getAndSet(null);
              if (neo4j != null) {
                neo4j.close();
              }
              delete(home);
            },
            "neo4j-harness-stop");
    Runtime.getRuntime().addShutdownHook(stop);
    try {
      server.set(
          Neo4jBuilders.newInProcessBuilder(home)
              .withDisabledServer() // no HTTP
              .withConfig(BoltConnector.enabled, true)
              .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
              .withConfig(GraphDatabaseSettings.auth_enabled, false)
              .withConfig(GraphDatabaseSettings.pagecache_memory, 64L * 1024 * 1024)
              .withConfig(GraphDatabaseSettings.udc_enabled, false) // no usage reports
              // Bolt's default graceful shutdown idles ~10 s before the process can exit.
              .withConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
              .withConfig(
                  GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
              .build());
    } catch (RuntimeException e) {
      e.printStackTrace();
      System.exit(1);
    }
    ready.println("BOLT bolt://127.0.0.1:" + server.get().boltURI().getPort());
    ready.flush();
    while (System.in.read() != -1) {
      // wait for EOF: the parent closed our stdin (or died)
    }
    System.exit(0); // the shutdown hook stops Neo4j and removes its directory
  }

  private static void delete(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not remove " + root + ": " + e);
    }
  }
}
