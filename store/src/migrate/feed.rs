//! Keeping every thread of the pool busy: each thread takes its next run itself, so none waits
//! for a coordinator to hand out more work. Handing the pool one chunk at a time from outside
//! (`install` per chunk) left both workers idle at every chunk's end, for a millisecond or more:
//! the caller had to wake, inject the next chunk, and rayon to wake a worker again.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The items of [`chunks_in_order`] in the order they are taken, and which of them one thread
/// takes together: runs of one plan, whose plan the first of them reads for the others, would
/// otherwise go to every thread at once, and all but one would wait for that read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Items<'a> {
    items: &'a [usize],
    /// Whether the item at each position is taken with the one before it; empty when none is.
    joined: &'a [bool],
}

impl<'a> Items<'a> {
    /// Items taken one by one.
    #[cfg(test)]
    pub(crate) fn each(items: &'a [usize]) -> Self {
        Items { items, joined: &[] }
    }

    /// Items of which those `joined` at their position are taken with the item before them.
    pub(crate) fn joined(items: &'a [usize], joined: &'a [bool]) -> Self {
        assert_eq!(items.len(), joined.len(), "one mark per item");
        Items { items, joined }
    }

    /// Where the items taken with the one at `from` end, within `end`.
    fn together(&self, from: usize, end: usize) -> usize {
        let mut to = from + 1;
        while to < end && self.joined.get(to).copied().unwrap_or(false) {
            to += 1;
        }
        to
    }
}

/// Runs `each` on every item of `items` on all threads of `pool`. The items are taken in order
/// (those joined together by one thread, in order) and grouped in chunks of `chunk_size`:
/// `start` sees each chunk before any of its items runs, and `finish` gets each chunk's results
/// in item order, chunk after chunk in order, whichever thread finished them. No chunk starts
/// once `start` has returned `false` or a result met `halts`; the chunks already started are
/// completed and finished.
pub(crate) fn chunks_in_order<T: Send>(
    pool: &rayon::ThreadPool,
    items: Items<'_>,
    chunk_size: usize,
    start: impl Fn(&[usize]) -> bool + Sync,
    each: impl Fn(usize) -> T + Sync,
    halts: impl Fn(&T) -> bool + Sync,
    finish: impl FnMut(Vec<T>) + Send,
) {
    let feed = Feed {
        items,
        chunk_size: chunk_size.max(1),
        claims: Mutex::new(Claims::default()),
        pending: Mutex::new(BTreeMap::new()),
        delivery: Mutex::new(Delivery { next: 0, finish }),
        halted: AtomicBool::new(false),
    };
    pool.broadcast(|_| {
        while let Some((chunk, position, taken)) = feed.claim(&start) {
            for (offset, &item) in taken.iter().enumerate() {
                let result = each(item);
                if halts(&result) {
                    feed.halted.store(true, Ordering::Relaxed);
                }
                feed.store(chunk, position + offset, result);
            }
        }
    });
}

/// Runs `produce` on the calling thread while all threads of `pool` take the batches it sends,
/// each thread folding the batches it took into its own accumulator, one batch at a time.
/// Returns what `produce` returned and the threads' accumulators, once every batch sent has
/// been folded. A panic in `fold` is raised here, after `produce` has returned.
pub(crate) fn fed_by<B: Send, A: Default + Send, P>(
    pool: &rayon::ThreadPool,
    produce: impl FnOnce(&mut dyn FnMut(B)) -> P,
    fold: impl Fn(&mut A, B) + Sync,
) -> (P, Vec<A>) {
    let (sender, receiver) = std::sync::mpsc::sync_channel::<B>(pool.current_num_threads());
    let receiver = Mutex::new(receiver);
    let panicked: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
    let (produced, folded) = std::thread::scope(|scope| {
        let consumers = scope.spawn(|| {
            pool.broadcast(|_| {
                let mut folded = A::default();
                // Once a fold panicked, the batches are still taken (and dropped), so that
                // `produce` is never left waiting on a full channel.
                loop {
                    // The guard must go before the fold, so that the other threads take batches.
                    let next = lock(&receiver).recv();
                    let Ok(batch) = next else { break };
                    if lock(&panicked).is_some() {
                        continue;
                    }
                    if let Err(payload) =
                        panic::catch_unwind(AssertUnwindSafe(|| fold(&mut folded, batch)))
                    {
                        lock(&panicked).get_or_insert(payload);
                    }
                }
                folded
            })
        });
        let produced = produce(&mut |batch| {
            // The consumers hold the receiver until this thread's sender is dropped.
            let _ = sender.send(batch);
        });
        drop(sender);
        let folded = joined(consumers);
        (produced, folded)
    });
    if let Some(payload) = lock(&panicked).take() {
        panic::resume_unwind(payload);
    }
    (produced, folded)
}

/// The scoped thread's result, or its panic raised on the calling thread.
pub(super) fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|payload| panic::resume_unwind(payload))
}

/// Runs `produce` on the calling thread while `pool` judges the batches it sends, and gives
/// each batch's items with their judgements to `apply` on the calling thread, batch after batch
/// in the order sent. Returns what `produce` returned, once every batch has been applied. A
/// panic in `judge` is raised here.
pub(crate) fn judged_in_order<I: Send + Sync, J: Send, P>(
    pool: &rayon::ThreadPool,
    produce: impl FnOnce(&mut dyn FnMut(Vec<I>)) -> P,
    judge: impl Fn(&I) -> J + Sync,
    mut apply: impl FnMut(Vec<(I, J)>),
) -> P {
    use rayon::prelude::*;
    std::thread::scope(|scope| {
        // Two batches wait while one is judged: enough to keep the pool busy, few lines held.
        let (to_judge, batches) = std::sync::mpsc::sync_channel::<Vec<I>>(2);
        let (to_apply, judged) = std::sync::mpsc::channel::<Vec<(I, J)>>();
        let judge = &judge;
        let judging = scope.spawn(move || {
            for batch in batches {
                let judgements: Vec<J> = pool.install(|| batch.par_iter().map(judge).collect());
                if to_apply
                    .send(batch.into_iter().zip(judgements).collect())
                    .is_err()
                {
                    break;
                }
            }
        });
        let produced = produce(&mut |batch| {
            // Fails only once the judging thread panicked; that panic is raised below.
            let _ = to_judge.send(batch);
            while let Ok(done) = judged.try_recv() {
                apply(done);
            }
        });
        drop(to_judge);
        // Ends when the judging thread has sent its last batch and ended.
        for done in judged {
            apply(done);
        }
        joined(judging);
        produced
    })
}

/// Which item is next, and whether new chunks may start.
#[derive(Default)]
struct Claims {
    /// The number of chunks started so far.
    chunks: usize,
    /// The index in `items` of the next item to run.
    next: usize,
    /// Where the chunk started last ends.
    end: usize,
    /// No further chunk starts.
    closed: bool,
}

/// The results of a started chunk, in item order, and how many are still to come.
struct Pending<T> {
    results: Vec<Option<T>>,
    missing: usize,
}

/// The next chunk to finish, and what finishes it.
struct Delivery<F> {
    next: usize,
    finish: F,
}

struct Feed<'a, T, F> {
    items: Items<'a>,
    chunk_size: usize,
    claims: Mutex<Claims>,
    pending: Mutex<BTreeMap<usize, Pending<T>>>,
    delivery: Mutex<Delivery<F>>,
    halted: AtomicBool,
}

/// Locks `mutex`, also after a thread panicked holding it: that panic is raised where it is joined.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a, T, F: FnMut(Vec<T>)> Feed<'a, T, F> {
    /// The next items to run (one, or those joined to it): their chunk, the position of the
    /// first in the chunk, and the items; `None` when there is none left or no new chunk may
    /// start.
    fn claim(&self, start: &impl Fn(&[usize]) -> bool) -> Option<(usize, usize, &'a [usize])> {
        let items = self.items.items;
        let mut claims = lock(&self.claims);
        if claims.next == claims.end {
            if claims.closed || claims.end == items.len() {
                return None;
            }
            let end = (claims.end + self.chunk_size).min(items.len());
            let chunk = &items[claims.end..end];
            if self.halted.load(Ordering::Relaxed) || !start(chunk) {
                claims.closed = true;
                return None;
            }
            lock(&self.pending).insert(
                claims.chunks,
                Pending {
                    results: std::iter::repeat_with(|| None).take(chunk.len()).collect(),
                    missing: chunk.len(),
                },
            );
            claims.chunks += 1;
            claims.end = end;
        }
        let index = claims.next;
        claims.next = self.items.together(index, claims.end);
        let chunk = claims.chunks - 1;
        Some((
            chunk,
            index - chunk * self.chunk_size,
            &items[index..claims.next],
        ))
    }

    /// Keeps an item's result; finishes every chunk now complete that is next in order.
    fn store(&self, chunk: usize, position: usize, result: T) {
        let complete = {
            let mut pending = lock(&self.pending);
            let entry = pending.get_mut(&chunk).expect("a started chunk is pending");
            entry.results[position] = Some(result);
            entry.missing -= 1;
            entry.missing == 0
        };
        if !complete {
            return;
        }
        // Whoever completes the chunk next in order finishes it and any complete ones after it.
        let mut delivery = lock(&self.delivery);
        loop {
            let ready = {
                let mut pending = lock(&self.pending);
                match pending.first_entry() {
                    Some(first) if *first.key() == delivery.next && first.get().missing == 0 => {
                        first.remove()
                    }
                    _ => break,
                }
            };
            delivery.next += 1;
            (delivery.finish)(ready.results.into_iter().flatten().collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn every_item_runs_once_and_chunks_finish_in_order() {
        for threads in [1, 2, 4] {
            for (count, chunk_size) in [(0, 3), (1, 3), (10, 3), (9, 3), (100, 7), (5, 1)] {
                let items: Vec<usize> = (0..count).map(|i| i * 10).collect();
                let started = Mutex::new(Vec::new());
                let mut finished = Vec::new();
                chunks_in_order(
                    &pool(threads),
                    Items::each(&items),
                    chunk_size,
                    |chunk| {
                        lock(&started).push(chunk.to_vec());
                        true
                    },
                    |item| {
                        // Uneven work, so that chunks complete out of order.
                        std::thread::sleep(std::time::Duration::from_micros(
                            (item % 7) as u64 * 50,
                        ));
                        item + 1
                    },
                    |_| false,
                    |results| finished.push(results),
                );
                let expected: Vec<Vec<usize>> = items
                    .chunks(chunk_size)
                    .map(|chunk| chunk.iter().map(|item| item + 1).collect())
                    .collect();
                assert_eq!(finished, expected, "{threads} threads, {count} items");
                let chunks: Vec<Vec<usize>> = items.chunks(chunk_size).map(<[_]>::to_vec).collect();
                assert_eq!(started.into_inner().unwrap(), chunks);
            }
        }
    }

    #[test]
    fn joined_items_run_on_the_thread_of_the_item_before_them() {
        // Items 10 to 14 and 20 to 22 are joined; chunks of four end between 12 and 13 and
        // between 20 and 21, and a chunk's end parts a group.
        let items: Vec<usize> = vec![1, 10, 11, 12, 13, 14, 2, 20, 21, 22, 3];
        let joined = [
            false, false, true, true, true, true, false, false, true, true, false,
        ];
        let threads = Mutex::new(BTreeMap::new());
        let mut finished = Vec::new();
        chunks_in_order(
            &pool(2),
            Items::joined(&items, &joined),
            4,
            |_| true,
            |item| {
                let thread = rayon::current_thread_index().expect("a pool thread");
                lock(&threads).insert(item, thread);
                std::thread::sleep(std::time::Duration::from_millis(5));
                item
            },
            |_| false,
            |results| finished.extend(results),
        );
        assert_eq!(finished, items);
        let threads = threads.into_inner().unwrap();
        for group in [&[10, 11, 12][..], &[13, 14], &[21, 22]] {
            let first = threads[&group[0]];
            assert!(
                group.iter().all(|item| threads[item] == first),
                "{group:?} ran on threads {threads:?}"
            );
        }
    }

    #[test]
    fn a_refused_start_or_a_halting_result_starts_no_further_chunk() {
        let items: Vec<usize> = (0..40).collect();
        let starts = AtomicUsize::new(0);
        let mut finished = Vec::new();
        chunks_in_order(
            &pool(2),
            Items::each(&items),
            4,
            |_| starts.fetch_add(1, Ordering::SeqCst) < 3,
            |item| item,
            |_| false,
            |results| finished.push(results),
        );
        assert_eq!(
            finished,
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9, 10, 11]]
        );

        let mut finished = Vec::new();
        chunks_in_order(
            &pool(1),
            Items::each(&items),
            4,
            |_| true,
            |item| item,
            |&result| result == 5,
            |results| finished.push(results),
        );
        assert_eq!(finished, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    }

    #[test]
    fn every_batch_sent_is_folded_once_whatever_thread_takes_it() {
        for threads in [1, 2, 3] {
            let (produced, folded) = fed_by(
                &pool(threads),
                |send| {
                    for batch in 0..50u64 {
                        send((batch * 10..batch * 10 + 10).collect::<Vec<u64>>());
                    }
                    "done"
                },
                |sum: &mut u64, batch: Vec<u64>| *sum += batch.iter().sum::<u64>(),
            );
            assert_eq!(produced, "done");
            assert_eq!(folded.len(), threads);
            assert_eq!(folded.iter().sum::<u64>(), (0..500).sum::<u64>());
        }
    }

    #[test]
    fn a_panicking_fold_is_raised_after_the_producer_returns() {
        let sent = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            fed_by(
                &pool(1),
                |send| {
                    // More batches than the channel holds: the producer must not block.
                    for batch in 0..10 {
                        send(batch);
                        sent.fetch_add(1, Ordering::SeqCst);
                    }
                },
                |folded: &mut usize, batch: usize| {
                    assert_ne!(batch, 2, "batch 2 fails");
                    *folded += 1;
                },
            )
        }));
        assert!(outcome.is_err());
        assert_eq!(sent.load(Ordering::SeqCst), 10);
    }

    /// Two calls under way at once: each call waits (up to five seconds) for another to be
    /// under way beside it, and says whether one was; calls made one at a time never see one.
    #[derive(Default)]
    struct Meeting(Mutex<usize>, std::sync::Condvar);

    impl Meeting {
        fn meet(&self) -> bool {
            let mut count = lock(&self.0);
            *count += 1;
            self.1.notify_all();
            let (count, _) = self
                .1
                .wait_timeout_while(count, std::time::Duration::from_secs(5), |c| *c < 2)
                .unwrap();
            *count >= 2
        }
    }

    #[test]
    fn two_threads_fold_two_batches_at_once() {
        let meeting = Meeting::default();
        let ((), met) = fed_by(
            &pool(2),
            |send| {
                send(());
                send(());
            },
            |met: &mut usize, ()| *met += usize::from(meeting.meet()),
        );
        assert_eq!(met.iter().sum::<usize>(), 2);
    }

    #[test]
    fn two_threads_run_two_items_at_once() {
        let meeting = Meeting::default();
        let mut finished = Vec::new();
        chunks_in_order(
            &pool(2),
            Items::each(&[0, 1]),
            2,
            |_| true,
            |_| meeting.meet(),
            |_| false,
            |results| finished.extend(results),
        );
        assert_eq!(finished, [true, true]);
    }
}
