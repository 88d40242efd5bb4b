// Trajectory and TrajectoryGroup sums, and the default group reward of EnvGroupBuilder.
#include <tinker/train/rl_env.hpp>

namespace tinker::train {

double Trajectory::total_reward() const {
  double total = final_reward;
  for (const Transition& transition : transitions) total += transition.reward;
  return total;
}

std::vector<double> TrajectoryGroup::total_rewards() const {
  std::vector<double> totals;
  totals.reserve(trajectories.size());
  for (const Trajectory& trajectory : trajectories) totals.push_back(trajectory.total_reward());
  return totals;
}

boost::asio::awaitable<std::vector<double>> EnvGroupBuilder::compute_group_rewards(
    const std::vector<Trajectory>& trajectories) {
  co_return std::vector<double>(trajectories.size(), 0.0);
}

}  // namespace tinker::train
