//! `FairSlots`: the read slots, shared between tenants fairly (issue #41 item 3).
//!
//! A semaphore serves whoever came first, so one tenant that sends many heavy reads holds
//! every slot (and every worker behind them) while another tenant's 21-byte read times out.
//! Here each tenant holds at most `per_tenant` slots at once, and a freed slot goes to the
//! waiting tenants in turn (round robin over tenants, first come within a tenant): a
//! tenant's tenth read waits behind its own ninth, never in front of another tenant's first.
//! A tenant alone uses every slot up to its cap; the default cap (`AppState::new`) leaves
//! room for another tenant whenever more than one is configured.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// The slots and who holds and waits for them.
pub struct FairSlots {
    state: Mutex<State>,
    per_tenant: usize,
}

#[derive(Default)]
struct State {
    free: usize,
    running: HashMap<String, usize>,
    /// Tenants with waiters, in the order their turns come.
    turns: VecDeque<String>,
    waiting: HashMap<String, VecDeque<oneshot::Sender<Permit>>>,
}

/// A slot held; freed (and handed to the next in turn) when dropped.
pub struct Permit {
    slots: Arc<FairSlots>,
    tenant: String,
    armed: bool,
}

impl FairSlots {
    pub fn new(total: usize, per_tenant: usize) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                free: total.max(1),
                ..Default::default()
            }),
            per_tenant: per_tenant.max(1),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait for a slot for `tenant`.
    pub async fn acquire(self: &Arc<Self>, tenant: &str) -> Permit {
        let rx = {
            let mut st = self.lock();
            let held = st.running.get(tenant).copied().unwrap_or(0);
            // Free slots exist only when nobody who may take one is waiting (a freed slot
            // is handed on at once), so taking it jumps no queue.
            if st.free > 0 && held < self.per_tenant {
                st.free -= 1;
                *st.running.entry(tenant.to_string()).or_insert(0) += 1;
                return self.permit(tenant);
            }
            let (tx, rx) = oneshot::channel();
            let queue = st.waiting.entry(tenant.to_string()).or_default();
            queue.push_back(tx);
            if queue.len() == 1 && !st.turns.iter().any(|t| t == tenant) {
                st.turns.push_back(tenant.to_string());
            }
            rx
        };
        match rx.await {
            Ok(p) => p,
            // The sender is only dropped with the slots themselves.
            Err(_) => std::future::pending().await,
        }
    }

    fn permit(self: &Arc<Self>, tenant: &str) -> Permit {
        Permit {
            slots: self.clone(),
            tenant: tenant.to_string(),
            armed: true,
        }
    }

    fn release(self: &Arc<Self>, tenant: &str) {
        let mut st = self.lock();
        st.free += 1;
        if let Some(n) = st.running.get_mut(tenant) {
            *n -= 1;
            if *n == 0 {
                st.running.remove(tenant);
            }
        }
        self.hand_on(&mut st);
    }

    /// Give free slots to waiters, a tenant at a time in turn, skipping tenants at their
    /// cap and waiters that gave up.
    fn hand_on(self: &Arc<Self>, st: &mut State) {
        let mut passed = 0;
        while st.free > 0 && passed < st.turns.len() {
            let Some(tenant) = st.turns.pop_front() else {
                break;
            };
            let held = st.running.get(&tenant).copied().unwrap_or(0);
            if held >= self.per_tenant {
                st.turns.push_back(tenant);
                passed += 1;
                continue;
            }
            let mut given = false;
            while let Some(tx) = st.waiting.get_mut(&tenant).and_then(|q| q.pop_front()) {
                st.free -= 1;
                *st.running.entry(tenant.clone()).or_insert(0) += 1;
                match tx.send(self.permit(&tenant)) {
                    Ok(()) => {
                        given = true;
                        break;
                    }
                    Err(mut p) => {
                        // Gave up waiting (its read was dropped or timed out): undone here,
                        // not through `Drop`, which would take the lock again.
                        p.armed = false;
                        st.free += 1;
                        if let Some(n) = st.running.get_mut(&tenant) {
                            *n -= 1;
                            if *n == 0 {
                                st.running.remove(&tenant);
                            }
                        }
                    }
                }
            }
            let more = st.waiting.get(&tenant).is_some_and(|q| !q.is_empty());
            if more {
                // Its next waiter comes after every other tenant's turn.
                st.turns.push_back(tenant);
            } else {
                st.waiting.remove(&tenant);
            }
            if given {
                passed = 0;
            }
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.armed {
            self.slots.release(&self.tenant);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn soon<T>(f: impl std::future::Future<Output = T>) -> Option<T> {
        tokio::time::timeout(Duration::from_millis(50), f)
            .await
            .ok()
    }

    #[tokio::test]
    async fn a_tenant_at_its_cap_leaves_the_rest_to_others() {
        let slots = FairSlots::new(2, 1);
        let a1 = slots.acquire("a").await;
        // A's second waits (its cap), B's first is served at once.
        let s = slots.clone();
        let a2 = tokio::spawn(async move { s.acquire("a").await });
        let b1 = soon(slots.acquire("b")).await.expect("B is served at once");
        drop(a1);
        let a2 = a2.await.unwrap();
        drop((a2, b1));
    }

    #[tokio::test]
    async fn freed_slots_go_round_robin_between_tenants() {
        let slots = FairSlots::new(1, 1);
        let first = slots.acquire("a").await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        // A queues three reads, then B one: B's comes second, not fourth.
        for t in ["a", "a", "a", "b"] {
            let (s, o) = (slots.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                let p = s.acquire(t).await;
                o.lock().unwrap().push(t);
                tokio::time::sleep(Duration::from_millis(5)).await;
                drop(p);
            }));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        drop(first);
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec!["a", "b", "a", "a"]);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_loses_no_slot() {
        let slots = FairSlots::new(1, 4);
        let held = slots.acquire("a").await;
        assert!(soon(slots.acquire("b")).await.is_none(), "no slot free");
        drop(held);
        // The dropped waiter's slot came back.
        assert!(soon(slots.acquire("c")).await.is_some());
    }
}
