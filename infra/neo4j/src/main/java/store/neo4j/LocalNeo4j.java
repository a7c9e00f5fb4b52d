package store.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts a real, in-process Neo4j for local development and tests.
 *
 * <p>Bolt listens on 127.0.0.1:$NEO4J_BOLT_PORT (default 7687) with authentication off; the HTTP
 * server is disabled. APOC core is loaded from $NEO4J_PLUGIN_DIR. The store lives under
 * $NEO4J_WORK_DIR and is thrown away on exit: `make seed` rebuilds it. Heap is capped by the
 * caller (-Xmx); the page cache by $NEO4J_PAGECACHE_MB (default 256).
 */
public final class LocalNeo4j {
    private LocalNeo4j() {}

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(env("NEO4J_BOLT_PORT", "7687"));
        Path work = Path.of(env("NEO4J_WORK_DIR", ".local/neo4j"));
        Path plugins = Path.of(env("NEO4J_PLUGIN_DIR", "infra/neo4j/target/plugins"));
        long pageCacheMb = Long.parseLong(env("NEO4J_PAGECACHE_MB", "256"));
        Files.createDirectories(work);

        Neo4j neo4j = Neo4jBuilders.newInProcessBuilder(work)
                .withDisabledServer()
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .withConfig(GraphDatabaseSettings.plugin_dir, plugins.toAbsolutePath())
                .withConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*"))
                .withConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * 1024L * 1024L)
                .withConfig(GraphDatabaseSettings.transaction_timeout, java.time.Duration.ofSeconds(30))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(neo4j::close, "neo4j-shutdown"));
        System.out.println("neo4j ready bolt=" + neo4j.boltURI());
        System.out.flush();
        Thread.currentThread().join();
    }
}
