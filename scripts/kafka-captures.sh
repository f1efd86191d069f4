#!/usr/bin/env bash
# Makes the captures behind tests/data/kafka/: Apache Kafka (a real
# broker, real clients, real Linux TCP), tcpdump in the clients'
# namespace, across a path of 20 ms each way (scripts/relay-path.sh):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# One broker for all the captures: Apache Kafka 4.1.1 (kafka_2.13 and
# its dependencies from Maven, run from their jars), KRaft, broker and
# controller in one process (node 1; its controller listener on
# 127.0.0.1:9193, not on the path), PLAINTEXT on 10.81.2.1:9092 and, for
# kafka-tls, SSL on 10.81.2.1:9093 (a self-signed RSA 2048 certificate
# made by keytool, CN rttdoc.test, SAN rttdoc.test and IP 10.81.2.1, in
# a PKCS12 keystore; Kafka's and the JVM's TLS defaults otherwise); the
# topic `lab` (one partition, replication 1) made before the captures,
# with the group coordinator's __consumer_offsets and a first idempotent
# producer, then an admin client's describeCluster over SSL, the broker's
# first TLS handshakes (KafkaLab setup, in the server's namespace). The
# broker's defaults otherwise: a Fetch waits at most the fetch.max.wait.ms its
# client sends (500 ms, the clients' default) when there is nothing to
# return, a new group's first join waits group.initial.rebalance.delay.ms
# (3000 ms). The broker answers the requests of one connection one at a
# time, in order.
#
# The Java clients (kafka-clients 4.1.1, their defaults but client.id,
# acks=all and linger.ms=0) are one single-file program, KafkaLab.java,
# launched as `java -cp 'libs/*' KafkaLab.java MODE`, a fresh JVM for each
# capture: every connection opens (SYN at 0 ms) and closes (the client's
# FIN) inside it. A Java client opens its bootstrap connection (ApiVersions,
# Metadata), then one of its own to node 1, the same address, for the
# work; the bootstrap connection then idles until the client closes.
# Each producer is idempotent (the default): InitProducerId on the
# bootstrap connection, pipelined behind the Metadata. Times below are
# from the captures (client side; request sent -> response arrived, so the
# broker's time is that minus the 40 ms round trip); "#N" is the
# correlation id.
#
#   kafka-consumer-idle.pcap  assign() to lab's partition 0 (no group),
#     seekToEnd (ListOffsets), polls; after 4 s a producer thread (its own
#     two connections) sends 3 messages 1.2 s apart, each awaited (1.2 s
#     rather than 1 s: the data then lands well inside a Fetch's wait,
#     not near its end); the consumer closes 1 s after the third. 16
#     Fetch (v18, an incremental fetch session: 48-byte requests, 17-byte
#     empty answers): 12 answered empty, the first after 578.2 ms, the
#     others after 542.9-548.0 ms (the broker held them 503-508 ms); 3 by the
#     data (219 bytes) after 530.3, 163.5 and 150.9 ms; the last (#20,
#     the close of the fetch session) sent while #19 was held, answered
#     78.1 ms later, just after #19. 3 Produce, 43.5-54.0 ms.
#   kafka-producer.pcap  20 messages one by one (send().get(): 20 Produce
#     of one record, each answered after 42.9-45.6 ms, the next sent 2-3 ms
#     after), then 200 sent at once and flushed: 6 Produce, 5 of them
#     (1, 2, 3, 23 and 7 records) sent within 5 ms on the one connection
#     (max.in.flight.requests.per.connection 5) and answered in order
#     after 44.0-49.4 ms, then one of 164 records (13830 bytes), 44.6 ms.
#   kafka-group.pcap  subscribe() in the group lab-group with the classic
#     protocol (group.protocol=classic, kafka-clients 4.1's default, set
#     explicitly: JoinGroup and SyncGroup, not ConsumerGroupHeartbeat),
#     polls for 7 s; a producer thread sends 2 messages 1.2 s apart from
#     1 s after the assignment; then close (OffsetCommit, LeaveGroup).
#     FindCoordinator on the bootstrap connection, then a connection of
#     its own to the coordinator (the same broker): JoinGroup #4 answered
#     MEMBER_ID_REQUIRED after 57.3 ms, JoinGroup #6 with the member id
#     held: answered after 3062.7 ms (the rebalance delay); SyncGroup
#     52.5 ms, OffsetFetch 53.0 ms, Heartbeat (3 s after) 43.1 ms,
#     OffsetCommit 59.9 ms, LeaveGroup 51.8 ms. On the third connection
#     (node 1): ListOffsets (no committed offset: latest), 9 Fetch: 6 empty
#     after 542.6-549.8 ms, 2 answered by the data after 79.4 and 162.0 ms,
#     the close's sent while the one before was held, answered 255.9 ms
#     later, just after it.
#   kafka-librdkafka.pcap  consumer-idle's shape with librdkafka
#     (confluent-kafka 2.16.1, librdkafka 2.16.0, their defaults): the
#     Python binding wants a group.id even for assign(), so FindCoordinator
#     and a coordinator connection that carries ApiVersions alone, but no
#     JoinGroup and no commits. librdkafka closes its bootstrap
#     connection once it knows broker 1 (126 ms in; the FindCoordinator
#     answer that arrives after the FIN draws the client's RST; the
#     producer's bootstrap connection likewise). 15 Fetch (v16, no fetch
#     session: 107-byte requests, 72-byte empty answers): 12 answered
#     empty after 542.0-543.6 ms, 3 by the data after 461.7, 155.0 and
#     158.3 ms. At the close the consumer sends its FIN while Fetch #19 is
#     held: the broker's answer comes 84 ms later and draws an RST. 3
#     Produce (v10), 42.5-43.2 ms.
#   kafka-tls.pcap  consume-idle over SSL (KafkaLab consume-idle-tls: both
#     clients security.protocol=SSL, bootstrap 10.81.2.1:9093, a truststore
#     of the broker's certificate, hostname verification on, by the SAN
#     IP; the JVM's TLS defaults). The same 4 connections, TLS from their
#     first byte (times below from tshark decoding port 9093 as TLS: the
#     Kafka inside can't be read, so "record" is a TLS record): each a full
#     TLS 1.3 handshake, TLS_AES_256_GCM_SHA384, x25519; the ClientHello
#     offers no ALPN and no SNI (the address is an IP). The client's second
#     connection to the address offers the first's session ticket (a
#     1013-byte PSK identity: a 1511-byte ClientHello, two segments); the
#     broker declines it (each of its 3 network threads builds an SSL
#     channel builder of its own: its own SSLContext, it seems, and ticket
#     keys). ClientHello
#     47.7-53.6 ms after the SYN (204.4 ms on the JVM's first connection:
#     its TLS setup); the broker's ServerHello 50.7-65.6 ms after it, then
#     its ChangeCipherSpec and one record of 1148 bytes (EncryptedExtensions
#     to Finished), each in a segment of its own; the client's Finished
#     5.6-11.4 ms after that (50.3 ms on the first), 56.3-112.3 ms after its
#     ClientHello, the first request 0.4-1.5 ms behind it (16.4 ms on the
#     first); the broker's
#     NewSessionTicket (1064 bytes) 42.2-49.4 ms after the Finished. Java
#     17 pads each TLS 1.3 record with 16 zero bytes: a Kafka message of N
#     bytes is a record of N + 33 (an empty Fetch 52 -> 85, its answer
#     21 -> 54); a Produce is 3 records, 3 segments (91, 179 and 36 bytes:
#     58 + 146 + 3, a record for each buffer of the request, its batch of
#     records apart), a Fetch's answer with data likewise. 16 Fetch
#     records on the consumer's node connection: 12 followed by the
#     broker's next record after 543.1-550.6 ms (held 503-511 ms); 3 by
#     the data after 454.9, 163.8 and 153.4 ms; the last (the close of the
#     fetch session) sent while the one before was held, 76.0 ms. 3 Produce,
#     the broker's answer 43.3-45.1 ms after the last record. At the close
#     each connection's client sends its close_notify and its FIN at once;
#     the broker's close_notify (42.3-44.6 ms later) and FIN draw RSTs
#     (kafka-consumer-idle's connections close FIN for FIN).
#   kafka-python.pcap  kafka-python 3.0.12 (pure Python; one program,
#     kpython_lab.py; idempotence off, so no InitProducerId): a producer
#     with acks=0 sends 5 messages 0.3 s apart and flushes, one with
#     acks=1 sends 3, each awaited (send().get()); then a consumer,
#     assign()ed to lab's partition 0 and seek_to_end (no group), polls
#     ~3 s with nothing to fetch, and a second acks=1 producer (a thread)
#     sends 3 messages 1.2 s apart, each awaited; the consumer closes 1 s
#     after the third. Each of the 4 clients opens a bootstrap connection
#     (ApiVersions, a Metadata of no topic), closes it 0.8-2.9 ms after
#     the Metadata answer, and 101-103 ms later opens its connection to
#     node 1 (ApiVersions, Metadata of lab, then the work): 8 connections,
#     176 frames. The versions kafka-python picks from the broker's
#     (Produce 0-13, Fetch 4-18): ApiVersions v4, Metadata v13, Produce v9
#     and Fetch v12 (its caps: no topic ids), ListOffsets v10, all
#     flexible. The 5 acks=0 Produce (#3-#7, frames 22-30, 193 bytes,
#     300.5 ms apart) get no answer, only the broker's ACKs; the client's
#     FIN 0.1 ms after the last (frame 31). The acks=1 Produce (#3-#5,
#     frames 56-60) answered after 42.2-42.7 ms (50 bytes). ListOffsets
#     42.0 ms. 14 Fetch (max_wait 500 ms, min_bytes 1, a fetch session:
#     98-byte requests when a partition's offset changed, 59 bytes
#     otherwise): 11 answered empty after 542.3-544.2 ms (held ~502 ms;
#     the first, #4, with the session's id, 60 bytes, the others 17); 3
#     by the data (207 bytes, 3 segments) after 418.0 (#9, frames
#     103->128), 152.6 (#12, 139->144) and 154.4 ms (#15, 154->157),
#     within 1.3 ms of the trickle's Produce answers (43.5, 42.6, 45.3
#     ms). No fetch-session close: the consumer sends its FIN (frame 171)
#     while Fetch #17 (frame 169) is held; the broker's empty answer 85 ms
#     later (frame 173) and its FIN draw RSTs.
#
# After each capture, tshark's reading (kafka_report.py, written below)
# pairs requests and responses by connection and correlation id (tshark
# 4.0 decodes the requests' header, not all of these newer API versions;
# a Produce with acks=0, by its kafka.required_acks, awaits no answer:
# kafka-python's are checked for having none) and checks what the
# capture must hold; for kafka-tls, whose Kafka it
# can't read, tls_report.py lists the TLS handshakes and the client's
# records with the time to the broker's next one and checks for 4 TLS 1.3
# handshakes on 9093 and at least 10 records held 520-700 ms.
#
# Needs root, ip, tcpdump, python3, Java 17 (and its keytool) and Maven
# (with access to Maven Central for org.apache.kafka:kafka_2.13 and its
# dependencies; the user's ~/.m2 is used as the cache); for
# kafka-librdkafka and kafka-python, python3's venv and access to PyPI
# for confluent-kafka and kafka-python (each capture is skipped when its
# client can't be installed); tshark to check what the captures hold.
set -euo pipefail
command -v tshark > /dev/null || { echo "needs tshark" >&2; exit 1; }
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtkafka$$ /tmp/rttdoc-kafka
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}
kafka_version=4.1.1

# --- the broker's and the clients' classpath, from Maven ---------------
cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rttdoc.lab</groupId>
  <artifactId>kafka-lab</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$kafka_version</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>2.24.3</version>
    </dependency>
  </dependencies>
</project>
POM
if ! (cd "$work" && mvn -B dependency:copy-dependencies -DoutputDirectory="$work/libs") > "$work/mvn.log" 2>&1; then
  tail -40 "$work/mvn.log" >&2
  exit 1
fi
cat > "$work/log4j2.properties" <<'LOG'
rootLogger.level = ${sys:lab.log.level:-WARN}
rootLogger.appenderRef.err.ref = err
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
LOG

# --- the broker's certificate (for kafka-tls) --------------------------
# Self-signed, RSA 2048, CN and SAN rttdoc.test and the SAN IP 10.81.2.1
# (the clients' default hostname verification checks the address they
# dial against it); the broker's PKCS12 keystore and the clients'
# truststore (that certificate alone).
keytool -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 3650 \
  -dname CN=rttdoc.test -ext SAN=dns:rttdoc.test,ip:10.81.2.1 \
  -storetype PKCS12 -keystore "$work/broker.p12" -storepass rttdoc-lab 2> "$work/keytool.log"
keytool -exportcert -alias broker -keystore "$work/broker.p12" -storepass rttdoc-lab \
  -file "$work/broker.crt" 2>> "$work/keytool.log"
keytool -importcert -noprompt -alias broker -file "$work/broker.crt" -storetype PKCS12 \
  -keystore "$work/truststore.p12" -storepass rttdoc-lab 2>> "$work/keytool.log"

# --- the broker: KRaft, broker and controller in one process -----------
cat > "$work/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:9193
listeners=PLAINTEXT://10.81.2.1:9092,SSL://10.81.2.1:9093,CONTROLLER://127.0.0.1:9193
advertised.listeners=PLAINTEXT://10.81.2.1:9092,SSL://10.81.2.1:9093,CONTROLLER://127.0.0.1:9193
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL
ssl.keystore.type=PKCS12
ssl.keystore.location=$work/broker.p12
ssl.keystore.password=rttdoc-lab
ssl.key.password=rttdoc-lab
log.dirs=$work/kafka-logs
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
PROPS
cd "$work"
java=(java -Xmx512m -Dlog4j2.configurationFile="$work/log4j2.properties")
# The cluster's id: the 16 bytes "rttdoc-kafka-lab", base64url.
ip netns exec "$S" "${java[@]}" -cp 'libs/*' kafka.tools.StorageTool \
  format -t cnR0ZG9jLWthZmthLWxhYg -c server.properties --standalone > "$work/format.log"
# Outside $pids (relay_capture_checked stops those after each capture):
# relay_stop_servers stops it.
ip netns exec "$S" "${java[@]}" -Xmx1g -Dlab.log.level=INFO -cp 'libs/*' \
  kafka.Kafka server.properties > "$work/broker.log" 2>&1 &
relay_listening 9092 600
relay_listening 9093

# --- the clients: one single-file Java program, KafkaLab.java ----------
cat > "$work/KafkaLab.java" <<'JAVA'
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

// The lab's clients: `KafkaLab setup | consume-idle | consume-idle-tls |
// produce | group`.
public class KafkaLab {
  static final String TOPIC = "lab", GROUP = "lab-group";
  static final long T0 = System.nanoTime();
  // PLAINTEXT on 9092; SSL on 9093 (consume-idle-tls): security.protocol
  // SSL, the truststore $work/truststore.p12 (the clients run in $work),
  // the JVM's TLS defaults otherwise.
  static boolean tls = false;

  static Properties common(String clientId) {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, tls ? "10.81.2.1:9093" : "10.81.2.1:9092");
    if (clientId != null) p.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
    if (tls) {
      p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
      p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
      p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, "truststore.p12");
      p.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, "rttdoc-lab");
    }
    return p;
  }

  static long ms() {
    return (System.nanoTime() - T0) / 1_000_000;
  }

  static void say(String what) {
    System.out.printf("%6d ms  %s%n", ms(), what);
    System.out.flush();
  }

  static Properties producerConfig(String clientId) {
    Properties p = common(clientId);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return p;
  }

  static Properties consumerConfig(String clientId) {
    Properties p = common(clientId);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    return p;
  }

  static String value(String what, int i) {
    return String.format("%s %03d %s", what, i, "x".repeat(64));
  }

  // A producer of its own (its own connections) sending `count` messages
  // `pauseMs` apart, each awaited (send().get(): one Produce, one answer).
  static Thread trickle(String clientId, int count, long pauseMs) {
    Thread t = new Thread(() -> {
      try (KafkaProducer<String, String> p = new KafkaProducer<>(producerConfig(clientId))) {
        for (int i = 0; i < count; i++) {
          if (i > 0) Thread.sleep(pauseMs);
          RecordMetadata m = p.send(new ProducerRecord<>(TOPIC, value("trickle", i))).get(10, TimeUnit.SECONDS);
          say("produced offset " + m.offset());
        }
      } catch (Exception e) {
        e.printStackTrace();
        System.exit(1);
      }
    });
    return t;
  }

  static void print(ConsumerRecord<String, String> r) {
    say(String.format("record partition %d offset %d timestamp %d (%d ms ago): %s",
        r.partition(), r.offset(), r.timestamp(), System.currentTimeMillis() - r.timestamp(),
        r.value().substring(0, Math.min(11, r.value().length()))));
  }

  // Before the captures, on the server's host: the topic, the group
  // coordinator's topic (__consumer_offsets, made at the first
  // FindCoordinator) and a first idempotent producer (the broker's first
  // block of producer ids), so that the captures hold the clients' work;
  // then an admin client's describeCluster over SSL, the broker's first
  // TLS handshakes (nothing written).
  static void setup() throws Exception {
    try (Admin admin = Admin.create(common(null))) {
      admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
      admin.listConsumerGroupOffsets("lab-warm-up").partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
    }
    try (KafkaProducer<String, String> p = new KafkaProducer<>(producerConfig("lab-setup"))) {
      p.send(new ProducerRecord<>(TOPIC, "warm-up")).get(60, TimeUnit.SECONDS);
    }
    say("topic " + TOPIC + " made");
    tls = true;
    try (Admin admin = Admin.create(common(null))) {
      say("over SSL: " + admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
    }
  }

  // assign() (no group), seekToEnd, ~4 s of polls with nothing to fetch,
  // then a producer thread's 3 messages 1.2 s apart; closes 1 s after the
  // third arrives. Over SSL (both clients) when `tls`.
  static void consumeIdle() throws Exception {
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerConfig("lab-consumer"))) {
      TopicPartition tp = new TopicPartition(TOPIC, 0);
      c.assign(List.of(tp));
      c.seekToEnd(List.of(tp));
      Thread producer = trickle("lab-producer", 3, 1200);
      long start = ms(), doneAt = -1;
      int got = 0;
      say("polling");
      while (doneAt < 0 || ms() < doneAt + 1000) {
        if (ms() - start > 15000) throw new IllegalStateException("only " + got + " records in 15 s");
        if (producer.getState() == Thread.State.NEW && ms() - start >= 4000) {
          say("starting the producer");
          producer.start();
        }
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
          print(r);
          if (++got == 3) doneAt = ms();
        }
      }
      producer.join(10000);
      say("closing");
    }
  }

  // acks=all, linger.ms=0: 20 messages each awaited, then 200 sent as
  // fast as they go, flushed.
  static void produce() throws Exception {
    try (KafkaProducer<String, String> p = new KafkaProducer<>(producerConfig("lab-producer"))) {
      for (int i = 0; i < 20; i++) {
        p.send(new ProducerRecord<>(TOPIC, value("sync", i))).get(10, TimeUnit.SECONDS);
      }
      say("20 sent one by one");
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        sent.add(p.send(new ProducerRecord<>(TOPIC, value("async", i))));
      }
      p.flush();
      for (Future<RecordMetadata> f : sent) f.get(10, TimeUnit.SECONDS);
      say("200 sent at once, flushed");
    }
  }

  // subscribe() in a group (the classic protocol: JoinGroup, SyncGroup,
  // Heartbeat), a producer thread's 2 messages 1.2 s apart starting 1 s
  // after the assignment, polls for 7 s in all, then close (LeaveGroup).
  static void group() throws Exception {
    Properties p = consumerConfig("lab-group-consumer");
    p.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    long[] assignedAt = {-1};
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
      c.subscribe(List.of(TOPIC), new ConsumerRebalanceListener() {
        public void onPartitionsRevoked(java.util.Collection<TopicPartition> parts) {}

        public void onPartitionsAssigned(java.util.Collection<TopicPartition> parts) {
          assignedAt[0] = ms();
          say("assigned " + parts);
        }
      });
      Thread producer = trickle("lab-producer", 2, 1200);
      long start = ms();
      int got = 0;
      say("polling");
      while (got < 2 || ms() - start < 7000) {
        if (ms() - start > 18000) throw new IllegalStateException("only " + got + " records in 18 s");
        if (producer.getState() == Thread.State.NEW && assignedAt[0] >= 0 && ms() >= assignedAt[0] + 1000) {
          say("starting the producer");
          producer.start();
        }
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
          print(r);
          got++;
        }
      }
      producer.join(10000);
      say("closing");
    }
  }

  public static void main(String[] args) throws Exception {
    switch (args.length == 1 ? args[0] : "") {
      case "setup" -> setup();
      case "consume-idle" -> consumeIdle();
      case "consume-idle-tls" -> {
        tls = true;
        consumeIdle();
      }
      case "produce" -> produce();
      case "group" -> group();
      default -> {
        System.err.println("usage: KafkaLab setup | consume-idle | consume-idle-tls | produce | group");
        System.exit(2);
      }
    }
  }
}
JAVA
ip netns exec "$S" "${java[@]}" -cp 'libs/*' KafkaLab.java setup

# --- what a capture holds: tshark's reading, checked ------------------
cat > "$work/kafka_report.py" <<'PY'
"""Pairs each Kafka request in a capture with its response (the same TCP
connection, the same correlation id; from tshark's fields: tshark 4.0
names the API keys of requests but not of responses of the newer
versions), prints each pair and a table by API key, and checks the
capture:

    kafka_report.py PCAP CHECK...

CHECK is KEY>=N (at least N requests of API key KEY), KEY@LO-HI>=N (at
least N of them answered LO ms or more and less than HI ms after they
left), KEY@none>=N (at least N of them never answered) or inflight>=N
(at some moment N requests awaited their answers on one connection). A
Produce with acks=0 (kafka.required_acks) awaits no answer: it is never
counted in flight.
"""
import re
import statistics
import subprocess
import sys

NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit",
         9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat",
         13: "LeaveGroup", 14: "SyncGroup", 18: "ApiVersions", 22: "InitProducerId"}

rows = subprocess.run(
    ["tshark", "-r", sys.argv[1], "-d", "tcp.port==9092,kafka", "-Y", "kafka", "-T", "fields",
     "-e", "frame.time_relative", "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "kafka.len",
     "-e", "kafka.request_key", "-e", "kafka.api_version", "-e", "kafka.correlation_id",
     "-e", "kafka.required_acks"],
    check=True, capture_output=True, text=True).stdout.splitlines()
pending, pairs, most_inflight = {}, [], 0
for row in rows:
    t, stream, sport, lens, keys, versions, corrs, acks = row.split("\t")
    t, corrs = float(t) * 1000, [int(c) for c in corrs.split(",")]
    lens, acks = lens.split(","), iter(acks.split(",") if acks else [])
    if sport != "9092":
        for key, version, corr, n in zip(keys.split(","), versions.split(","), corrs, lens):
            ahead = sum(1 for s, _ in pending if s == stream)
            req = dict(t=t, key=int(key), version=int(version), stream=int(stream), corr=corr,
                       len=int(n), ahead=ahead, answered=None, acks=next(acks, None) if key == "0" else None)
            if req["acks"] == "0":
                pairs.append(req)
                continue
            pending[stream, corr] = req
            most_inflight = max(most_inflight, ahead + 1)
    else:
        for corr, n in zip(corrs, lens):
            req = pending.pop((stream, corr))
            req["answered"], req["answer_len"] = t - req["t"], int(n)
            pairs.append(req)
pairs += pending.values()
pairs.sort(key=lambda r: r["t"])
for r in pairs:
    took = "no answer" if r["answered"] is None else f"answer after {r['answered']:6.1f} ms, {r['answer_len']} bytes"
    ahead = f"  ({r['ahead']} ahead of it)" if r["ahead"] else ""
    acks = " acks=0" if r["acks"] == "0" else ""
    print(f"  {r['t']:8.1f} ms  conn {r['stream']}  {NAMES.get(r['key'], r['key'])}{acks} v{r['version']}"
          f" #{r['corr']} {r['len']} bytes, {took}{ahead}")
by_key = {}
for r in pairs:
    by_key.setdefault(r["key"], []).append(r["answered"])
print(f"  {'request':16} {'count':>5}  request->response, ms: min / median / max")
for key, took in sorted(by_key.items()):
    done = [x for x in took if x is not None]
    span = f"{min(done):7.1f} / {statistics.median(done):7.1f} / {max(done):7.1f}" if done else "-"
    print(f"  {NAMES.get(key, key):16} {len(took):5}  {span}")
print(f"  at most {most_inflight} requests awaiting their answers on one connection")
failed = False
for check in sys.argv[2:]:
    m = re.fullmatch(r"(inflight|\d+)(?:@(\d+)-(\d+)|@(none))?>=(\d+)", check)
    if m is None:
        sys.exit(f"bad check {check}")
    what, lo, hi, none, n = m.groups()
    if what == "inflight":
        got = most_inflight
    elif none:
        got = sum(1 for x in by_key.get(int(what), []) if x is None)
    else:
        took = by_key.get(int(what), [])
        got = len(took) if lo is None else sum(1 for x in took if x is not None and int(lo) <= x < int(hi))
    if got < int(n):
        print(f"check {check} failed: {got}", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)
PY
report() { # NAME CHECK...
  local name=$1; shift
  if ! python3 "$work/kafka_report.py" "$out/$name.pcap.gz" "$@" > "$work/$name.report"; then
    cat "$work/$name.report" >&2
    echo "$name does not hold what it should" >&2
    exit 1
  fi
  sed -n '/^  request /,$p' "$work/$name.report" >&2
}

# Runs `KafkaLab MODE` in the client's namespace (a fresh JVM: its
# connections open inside the capture) for the capture NAME, its output
# kept in $work/MODE.out and shown after the capture.
lab() { # NAME MODE
  relay_capture_checked "$1" sh -c \
    "exec java -Xmx256m -Dlog4j2.configurationFile=log4j2.properties -cp 'libs/*' KafkaLab.java $2 > $2.out"
  sed "s/^/  $2: /" "$work/$2.out" >&2
}

lab kafka-consumer-idle consume-idle
report kafka-consumer-idle '1>=10' '1@520-700>=5' '1@41-500>=2' '0>=3' '22>=1'
lab kafka-producer produce
report kafka-producer '0>=21' 'inflight>=3' '22>=1'
lab kafka-group group
report kafka-group '11>=2' '11@2900-4000>=1' '14>=1' '12>=1' '13>=1' '1@520-700>=2'

# --- librdkafka (confluent-kafka), consume-idle's shape ----------------
# Skipped, and said so, when the venv or the wheel can't be had.
if python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q confluent-kafka==2.16.1; then
  cat > "$work/rdkafka_lab.py" <<'PY'
"""consume-idle with librdkafka: assign (partition 0 of lab, from its
end), ~4 s of polls with nothing to fetch, then a producer thread's 3
messages 1.2 s apart (each flushed); closes 1 s after the third arrives."""
import sys
import threading
import time

import confluent_kafka as ck

BOOTSTRAP, TOPIC = "10.81.2.1:9092", "lab"
T0 = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:6.0f} ms  {what}", flush=True)


def trickle():
    p = ck.Producer({"bootstrap.servers": BOOTSTRAP, "client.id": "lab-rdkafka-producer", "acks": "all"})
    for i in range(3):
        if i:
            time.sleep(1.2)
        p.produce(TOPIC, f"trickle {i:03d} " + "x" * 64)
        if p.flush(10) != 0:
            sys.exit("not delivered")
        say(f"produced {i}")


say(f"confluent-kafka {ck.version()}, librdkafka {ck.libversion()[0]}")
# The binding wants a group.id even for assign(): no subscribe, so no
# JoinGroup, and no commits.
c = ck.Consumer({"bootstrap.servers": BOOTSTRAP, "client.id": "lab-rdkafka-consumer",
                 "group.id": "lab-rdkafka", "enable.auto.commit": False,
                 "enable.auto.offset.store": False})
c.assign([ck.TopicPartition(TOPIC, 0, ck.OFFSET_END)])
producer = threading.Thread(target=trickle)
start, done_at, got = time.monotonic(), None, 0
say("polling")
while done_at is None or time.monotonic() < done_at + 1:
    if time.monotonic() - start > 15:
        sys.exit(f"only {got} records in 15 s")
    if not producer.is_alive() and producer.ident is None and time.monotonic() - start >= 4:
        say("starting the producer")
        producer.start()
    m = c.poll(0.1)
    if m is None:
        continue
    if m.error():
        sys.exit(str(m.error()))
    say(f"record partition {m.partition()} offset {m.offset()} timestamp {m.timestamp()[1]}: {m.value()[:11].decode()}")
    got += 1
    if got == 3:
        done_at = time.monotonic()
producer.join(10)
say("closing")
c.close()
PY
  relay_capture_checked kafka-librdkafka sh -c "exec '$work/venv/bin/python' rdkafka_lab.py > rdkafka.out"
  sed "s/^/  librdkafka: /" "$work/rdkafka.out" >&2
  report kafka-librdkafka '1>=10' '1@520-700>=5' '1@41-500>=2' '0>=3'
else
  echo "no confluent-kafka: kafka-librdkafka skipped" >&2
fi

# --- kafka-tls: consume-idle over SSL (9093) ---------------------------
# kafka_report.py can't read Kafka inside TLS: tls_report.py reads the
# TLS records instead (tshark, port 9093 decoded as TLS): each
# connection's handshake, then each of the client's frames with encrypted
# records (application data, from the client's Finished on) and the time
# to the broker's next record on that connection.
cat > "$work/tls_report.py" <<'PY'
"""Reads the TLS records of a capture on port 9093 (tshark), prints each
connection's handshake (SYN, ClientHello, ServerHello and the client's
Finished, times from the SYN; the version and cipher suite the broker
chose, the ALPN and SNI the client offered) and each of the client's
frames with encrypted records with the time from it to the broker's next
record on that connection; checks the capture:

    tls_report.py PCAP CHECK...

CHECK is handshakes>=N (connections with a ClientHello and the broker's
ServerHello choosing TLS 1.3) or held@LO-HI>=N (at least N of the
client's frames followed by the broker's next record LO ms or more and
less than HI ms after they left).
"""
import re
import subprocess
import sys

PORT = "9093"


def fields(*names, filter):
    out = subprocess.run(
        ["tshark", "-r", sys.argv[1], "-d", f"tcp.port=={PORT},tls", "-Y", filter, "-T", "fields"]
        + [x for n in names for x in ("-e", n)],
        check=True, capture_output=True, text=True).stdout
    return [row.split("\t") for row in out.splitlines()]


conns = {}
for t, stream, sport in fields("frame.time_relative", "tcp.stream", "tcp.srcport",
                               filter=f"tcp.port=={PORT} && tcp.flags.syn==1 && tcp.flags.ack==0"):
    conns[stream] = dict(syn=float(t) * 1000, port=sport, hello=None, server_hello=None,
                         finished=None, version="-", cipher="-", alpn="", sni="")
# A frame's records: tls.record.content_type for the plaintext ones
# (ClientHello, ServerHello, ChangeCipherSpec), tls.record.opaque_type
# (23) for the encrypted ones, which come after them: a frame's last
# lengths are its encrypted records'.
records = fields("frame.time_relative", "tcp.stream", "tcp.srcport", "tls.record.opaque_type",
                 "tls.record.length", "tls.handshake.type", "tls.handshake.extensions.supported_version",
                 "tls.handshake.ciphersuite", "tls.handshake.extensions_alpn_str",
                 "tls.handshake.extensions_server_name", filter=f"tcp.port=={PORT} && tls.record")
sent, waiting = [], {}
for t, stream, sport, opaque, lens, hs, versions, suites, alpn, sni in records:
    t, c = float(t) * 1000, conns.setdefault(stream, dict(syn=None, port="?", hello=None, server_hello=None,
                                                          finished=None, version="-", cipher="-", alpn="", sni=""))
    hs, encrypted = hs.split(","), [int(n) for n in lens.split(",")][len(lens.split(",")) - len(opaque.split(",")):] if opaque else []
    if sport != PORT:
        if "1" in hs and c["hello"] is None:
            c["hello"], c["alpn"], c["sni"] = t, alpn, sni
        if encrypted:
            c["finished"] = c["finished"] or t
            f = dict(stream=stream, t=t, records=encrypted, answered=None)
            waiting.setdefault(stream, []).append(f)
            sent.append(f)
    else:
        if "2" in hs and c["server_hello"] is None:
            c["server_hello"], c["cipher"] = t, suites
            c["version"] = versions or "(no supported_versions)"
        for f in waiting.pop(stream, []):
            f["answered"] = t - f["t"]


def since(c, k):
    return "-" if c[k] is None or c["syn"] is None else f"{c[k] - c['syn']:6.1f}"


print("  conn  client port  SYN at   ClientHello  ServerHello  Finished (ms from the SYN)  version, cipher, ALPN, SNI")
for stream, c in sorted(conns.items(), key=lambda kv: int(kv[0])):
    syn = "-" if c["syn"] is None else f"{c['syn']:8.1f}"
    print(f"  {stream:>4}  {c['port']:>11}  {syn}  {since(c, 'hello'):>11}  {since(c, 'server_hello'):>11}"
          f"  {since(c, 'finished'):>8}  {c['version']}, {c['cipher']}, ALPN {c['alpn'] or 'none'},"
          f" SNI {c['sni'] or 'none'}")
for f in sent:
    took = "no record after it" if f["answered"] is None else f"the broker's next record {f['answered']:6.1f} ms after"
    sizes = "+".join(str(n) for n in f["records"])
    print(f"  {f['t']:8.1f} ms  conn {f['stream']}  records of {sizes} bytes, {took}")
failed = False
for check in sys.argv[2:]:
    m = re.fullmatch(r"(handshakes|held)(?:@(\d+)-(\d+))?>=(\d+)", check)
    if m is None:
        sys.exit(f"bad check {check}")
    what, lo, hi, n = m.groups()
    if what == "handshakes":
        got = sum(1 for c in conns.values() if c["hello"] is not None and "0x0304" in c["version"])
    else:
        got = sum(1 for f in sent if f["answered"] is not None and int(lo) <= f["answered"] < int(hi))
    print(f"  {check}: {got}")
    if got < int(n):
        print(f"check {check} failed: {got}", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)
PY
lab kafka-tls consume-idle-tls
if ! python3 "$work/tls_report.py" "$out/kafka-tls.pcap.gz" 'handshakes>=4' 'held@520-700>=10' \
  > "$work/kafka-tls.report"; then
  cat "$work/kafka-tls.report" >&2
  echo "kafka-tls does not hold what it should" >&2
  exit 1
fi
cat "$work/kafka-tls.report" >&2

# --- kafka-python (pure Python): acks=0, acks=1 and an idle consumer ---
# kafka-python 3.0.12 in the work dir's venv (made above for
# confluent-kafka, or here); skipped, and said so, when it can't be had.
if { [[ -x $work/venv/bin/python ]] || python3 -m venv "$work/venv"; } \
  && "$work/venv/bin/pip" install -q kafka-python==3.0.12; then
  cat > "$work/kpython_lab.py" <<'PY'
"""kafka-python, one program: a producer with acks=0 sends 5 messages
0.3 s apart (the broker answers none of these Produce) and flushes; a
producer with acks=1 sends 3, each awaited; then a consumer assign()ed to
lab's partition 0, from its end (seek_to_end: ListOffsets), polls ~3 s
with nothing to fetch (each Fetch held fetch_max_wait_ms, 500 ms), then a
second acks=1 producer (a thread) sends 3 messages 1.2 s apart, each
awaited; the consumer closes 1 s after the third arrives. Idempotence
off (acks=0 and acks=1 can't have it): no InitProducerId."""
import sys
import threading
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

BOOTSTRAP, TOPIC = "10.81.2.1:9092", "lab"
T0 = time.monotonic()
SAYING = threading.Lock()


def say(what):
    with SAYING:
        print(f"{(time.monotonic() - T0) * 1000:6.0f} ms  {what}", flush=True)


def value(what, i):
    return f"{what} {i:03d} {'x' * 64}".encode()


def producer(client_id, acks):
    return KafkaProducer(bootstrap_servers=BOOTSTRAP, client_id=client_id, acks=acks,
                         enable_idempotence=False, linger_ms=0)


def trickle():
    p = producer("lab-python-trickle", 1)
    for i in range(3):
        if i:
            time.sleep(1.2)
        m = p.send(TOPIC, value("trickle", i)).get(timeout=10)
        say(f"trickle: produced offset {m.offset}")
    p.close()


say(f"kafka-python {kafka.__version__}")
p = producer("lab-python-acks0", 0)
for i in range(5):
    if i:
        time.sleep(0.3)
    p.send(TOPIC, value("acks0", i))
p.flush()
say("acks=0: 5 sent, flushed")
p.close()
p = producer("lab-python-acks1", 1)
for i in range(3):
    m = p.send(TOPIC, value("acks1", i)).get(timeout=10)
    say(f"acks=1: produced offset {m.offset}")
p.close()
say("producers closed")
c = KafkaConsumer(bootstrap_servers=BOOTSTRAP, client_id="lab-python-consumer",
                  group_id=None, enable_auto_commit=False)
tp = TopicPartition(TOPIC, 0)
c.assign([tp])
c.seek_to_end(tp)
thread = threading.Thread(target=trickle)
start, done_at, got = time.monotonic(), None, 0
say("polling")
while done_at is None or time.monotonic() < done_at + 1:
    if time.monotonic() - start > 15:
        sys.exit(f"only {got} records in 15 s")
    if thread.ident is None and time.monotonic() - start >= 3:
        say("starting the producer")
        thread.start()
    for records in c.poll(timeout_ms=100).values():
        for r in records:
            say(f"record partition {r.partition} offset {r.offset} timestamp {r.timestamp}: {r.value[:11].decode()}")
            got += 1
            if got == 3:
                done_at = time.monotonic()
thread.join(10)
say("closing")
c.close()
PY
  relay_capture_checked kafka-python sh -c "exec '$work/venv/bin/python' kpython_lab.py > kpython.out"
  sed "s/^/  kafka-python: /" "$work/kpython.out" >&2
  report kafka-python '0>=11' '0@none>=5' '1>=6' '1@520-700>=3' '1@41-500>=2'
else
  echo "no kafka-python: kafka-python skipped" >&2
fi
relay_stop_servers
ls -l "$out"/kafka-*.pcap.gz
