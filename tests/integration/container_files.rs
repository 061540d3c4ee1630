//! The container's files agree with each other and with the service: the two ways to build
//! the image end the same, and the gateway example lets through what the service accepts.
//! (`make test-container` runs them for real; these catch drift on every `cargo test`.)

use crate::common::repo;

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap()
}

fn final_stage(text: &str) -> &str {
    let at = text
        .find("# --- the final stage")
        .expect("the final stage's marker");
    &text[at..]
}

#[test]
fn containerfile_and_dockerfile_end_with_the_same_stage() {
    let ci = read("docker/Containerfile");
    let source = read("docker/Dockerfile");
    assert_eq!(final_stage(&ci), final_stage(&source));
    // Both take the root docker/mkroot.sh assembles, and the data mount owned by the user.
    assert!(ci.contains(
        "FROM scratch\nCOPY root/ /\nCOPY --chown=10001:10001 data/ /var/lib/docreader/\n"
    ));
    assert!(source.contains(
        "FROM scratch\nCOPY --from=root /image/root/ /\nCOPY --from=root --chown=10001:10001 /image/data/ /var/lib/docreader/\n"
    ));
    assert!(source.contains("bash /src/docker/mkroot.sh /image/root "));
    assert!(read("docker/build-image.sh").contains("bash docker/mkroot.sh \"$stage/root\""));
    let stage = final_stage(&ci);
    for needed in [
        "USER 10001:10001",
        "DOCREADER_LOG_FORMAT=json",
        "CMD [\"/usr/local/bin/docreader\", \"healthcheck\"]",
        "VOLUME /var/lib/docreader",
    ] {
        assert!(
            stage.contains(needed),
            "{needed} missing from the final stage"
        );
    }
}

/// nginx's body cap sits above the service's file limit (so clients get the service's JSON
/// 413), uploads stream through, and the addresses tests/container/run.sh rewrites are there.
#[test]
fn the_gateway_example_fits_the_service() {
    let conf = read("docker/nginx.conf");
    let cap = conf
        .lines()
        .find_map(|l| l.trim().strip_prefix("client_max_body_size "))
        .expect("client_max_body_size");
    let mib: u64 = cap
        .trim_end_matches(';')
        .trim_end_matches('m')
        .parse()
        .unwrap();
    let service = docreader::config::Limits::default().max_file_bytes;
    assert!(
        mib << 20 > service,
        "nginx's {mib} MiB is not above the service's {service} bytes"
    );
    for needed in [
        "server 127.0.0.1:8080;",
        "listen 127.0.0.1:8000;",
        "proxy_request_buffering off;",
        "proxy_set_header X-Request-Id $docreader_request_id;",
    ] {
        assert!(
            conf.contains(needed),
            "{needed} missing from docker/nginx.conf"
        );
    }
    // Reads may take the deadline and the grace period: nginx must wait longer.
    let limits = docreader::config::Limits::default();
    let wait: u64 = conf
        .lines()
        .find_map(|l| l.trim().strip_prefix("proxy_read_timeout "))
        .map(|v| {
            v.trim_end_matches(';')
                .trim_end_matches('s')
                .parse()
                .unwrap()
        })
        .expect("proxy_read_timeout");
    assert!(wait * 1000 > limits.deadline_ms + limits.grace_ms);
}
