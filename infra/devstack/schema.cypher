// Store and knowledge-base schema (docs/graph-model.md). Idempotent: every statement uses
// IF NOT EXISTS. `{{EMBEDDING_DIMENSION}}` is replaced by devstack.schema with an integer
// (settings: EMBEDDING_DIMENSION, 384 for all-MiniLM-L6-v2). Statements end with ";".

// Uniqueness: one constraint per key (each also gives the key an index for MATCH/MERGE).
CREATE CONSTRAINT customer_id IF NOT EXISTS FOR (n:Customer) REQUIRE n.customer_id IS UNIQUE;
CREATE CONSTRAINT address_id IF NOT EXISTS FOR (n:Address) REQUIRE n.address_id IS UNIQUE;
CREATE CONSTRAINT payment_method_id IF NOT EXISTS FOR (n:PaymentMethod) REQUIRE n.payment_method_id IS UNIQUE;
CREATE CONSTRAINT order_id IF NOT EXISTS FOR (n:Order) REQUIRE n.order_id IS UNIQUE;
CREATE CONSTRAINT line_id IF NOT EXISTS FOR (n:OrderLine) REQUIRE n.line_id IS UNIQUE;
CREATE CONSTRAINT transaction_id IF NOT EXISTS FOR (n:Transaction) REQUIRE n.transaction_id IS UNIQUE;
CREATE CONSTRAINT tracking_id IF NOT EXISTS FOR (n:Shipment) REQUIRE n.tracking_id IS UNIQUE;
CREATE CONSTRAINT event_id IF NOT EXISTS FOR (n:TrackingEvent) REQUIRE n.event_id IS UNIQUE;
CREATE CONSTRAINT product_id IF NOT EXISTS FOR (n:Product) REQUIRE n.product_id IS UNIQUE;
CREATE CONSTRAINT item_id IF NOT EXISTS FOR (n:Variant) REQUIRE n.item_id IS UNIQUE;
CREATE CONSTRAINT category_name IF NOT EXISTS FOR (n:Category) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT doc_id IF NOT EXISTS FOR (n:Document) REQUIRE n.doc_id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (n:Chunk) REQUIRE n.chunk_id IS UNIQUE;
// Customer actions: one audit event per idempotency key is what makes a write exactly-once in Neo4j.
CREATE CONSTRAINT audit_id IF NOT EXISTS FOR (n:AuditEvent) REQUIRE n.audit_id IS UNIQUE;
CREATE CONSTRAINT audit_idempotency_key IF NOT EXISTS FOR (n:AuditEvent) REQUIRE n.idempotency_key IS UNIQUE;
// Text2Cypher's few-shot example bank.
CREATE CONSTRAINT cypher_example_id IF NOT EXISTS FOR (n:CypherExample) REQUIRE n.example_id IS UNIQUE;

// Keyword search over knowledge chunks and product names.
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text, n.section];
CREATE FULLTEXT INDEX product_name IF NOT EXISTS FOR (n:Product) ON EACH [n.name];

// Few-shot examples for Text2Cypher, retrieved by similarity to the question.
CREATE VECTOR INDEX cypher_example_embedding IF NOT EXISTS FOR (n:CypherExample) ON (n.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSION}}, `vector.similarity_function`: 'cosine'}};

// Semantic search over knowledge chunks.
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON (n.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSION}}, `vector.similarity_function`: 'cosine'}};
